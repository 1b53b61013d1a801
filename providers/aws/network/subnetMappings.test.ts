import { describe, expect, test } from "vitest";
import { parseAwsSettings } from "../annotations/settings.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import { intent } from "../../../test/unit/support/awsIntent.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const NETWORK = {
  vpcId: "vpc-1",
  subnets: ["subnet-a", "subnet-b"],
  cidrs: {
    "subnet-a": { ipv4: ["10.0.0.0/24"], ipv6: ["2600:1f18::/64"] },
    "subnet-b": { ipv4: ["10.0.1.0/24"], ipv6: ["2600:1f18:0:1::/64"] },
  },
};
const build = (annotations: Record<string, string>, scheme: "internal" | "internet-facing" = "internal") =>
  desiredLoadBalancer(intent(), parseAwsSettings(annotations, { scheme }), NETWORK, "prod");

describe("static addresses", () => {
  test("private IPv4 addresses go to the subnet holding each, in any order; the name changes with them", () => {
    const lb = build({ [`${P}private-ipv4-addresses`]: "10.0.1.9, 10.0.0.9" });
    expect(lb.subnetMappings).toEqual([
      { subnetId: "subnet-a", privateIPv4Address: "10.0.0.9" },
      { subnetId: "subnet-b", privateIPv4Address: "10.0.1.9" },
    ]);
    expect(lb.name).not.toBe(build({}).name);
    expect(lb.name).not.toBe(build({ [`${P}private-ipv4-addresses`]: "10.0.1.8, 10.0.0.9" }).name);
    expect(build({}).subnetMappings).toBeUndefined();
  });

  test("Elastic IPs go to the subnets in order, internet-facing only", () => {
    const lb = build({ [`${P}eip-allocations`]: "eipalloc-1,eipalloc-2" }, "internet-facing");
    expect(lb.subnetMappings).toEqual([
      { subnetId: "subnet-a", allocationId: "eipalloc-1" },
      { subnetId: "subnet-b", allocationId: "eipalloc-2" },
    ]);
    expect(() => build({ [`${P}eip-allocations`]: "eipalloc-1,eipalloc-2" })).toThrow(/internet-facing/);
  });

  test("IPv6 addresses need dualstack and one per subnet", () => {
    const lb = build({
      [`${P}ip-address-type`]: "dualstack",
      [`${P}ipv6-addresses`]: "2600:1f18::10,2600:1f18:0:1::10",
    });
    expect(lb.subnetMappings!.map((m) => m.ipv6Address)).toEqual(["2600:1f18::10", "2600:1f18:0:1::10"]);
    expect(() => build({ [`${P}ipv6-addresses`]: "2600:1f18::10,2600:1f18:0:1::10" })).toThrow(/dualstack/);
  });

  test.each([
    [{ [`${P}private-ipv4-addresses`]: "10.0.0.9" }, /1 given for 2 subnets/],
    [{ [`${P}private-ipv4-addresses`]: "10.0.0.9,10.0.0.10" }, /two addresses are in subnet subnet-a/],
    [{ [`${P}private-ipv4-addresses`]: "10.0.0.9,10.9.0.1" }, /10.9.0.1 is in none of the NLB's subnets/],
    [{ [`${P}private-ipv4-addresses`]: "10.0.0.9,2600:1f18::1" }, /not an IPv4 address/],
    [{ [`${P}eip-allocations`]: "ip-1,ip-2" }, /not an Elastic IP allocation ID/],
  ])("refused with the annotation named: %o", (annotations, message) => {
    expect(() => build(annotations)).toThrow(message);
    expect(() => build(annotations)).toThrow(
      /metadata\.annotations\[service\.beta\.kubernetes\.io\/aws-load-balancer-/,
    );
  });

  test("private addresses on an internet-facing NLB are refused", () => {
    expect(() => build({ [`${P}private-ipv4-addresses`]: "10.0.0.9,10.0.1.9" }, "internet-facing")).toThrow(
      /internal NLBs/,
    );
  });
});
