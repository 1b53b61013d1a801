// A dualstack NLB in subnets without an IPv6 CIDR block is refused naming the annotation and those subnets, found or
// named; with IPv6 on every subnet, or an IPv4 NLB, nothing is said.
import { expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import type { Network } from "../model.ts";
import { intent } from "../../../test/unit/support/awsIntent.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const DUALSTACK = { [`${A}ip-address-type`]: "dualstack" };
const v4 = (cidr: string) => ({ ipv4: [cidr], ipv6: [] });
const v6 = (cidr: string, six: string) => ({ ipv4: [cidr], ipv6: [six] });

const build = (annotations: Record<string, string>, network: Network) =>
  desiredLoadBalancer(intent(), parseAwsSettings(annotations, { scheme: "internal" }), network, "prod");

function refusal(annotations: Record<string, string>, network: Network) {
  try {
    build(annotations, network);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
}

const NONE: Network = {
  vpcId: "vpc-1",
  subnets: ["subnet-a", "subnet-b"],
  cidrs: { "subnet-a": v4("10.0.0.0/24"), "subnet-b": v4("10.0.1.0/24") },
};
const ONE: Network = {
  ...NONE,
  cidrs: { "subnet-a": v6("10.0.0.0/24", "2600:1f18::/64"), "subnet-b": v4("10.0.1.0/24") },
};
const BOTH: Network = {
  ...NONE,
  cidrs: {
    "subnet-a": v6("10.0.0.0/24", "2600:1f18::/64"),
    "subnet-b": v6("10.0.1.0/24", "2600:1f18:0:1::/64"),
  },
};

test("discovered subnets without IPv6: the annotation, the subnets and the tag that found them", () => {
  const err = refusal(DUALSTACK, NONE);
  expect(err?.reason).toBe("SubnetsWithoutIPv6");
  expect(err?.field).toBe(`metadata.annotations[${A}ip-address-type]`);
  expect(err?.message).toContain(
    "subnets subnet-a, subnet-b (found by their kubernetes.io/role/internal-elb tag) have none",
  );
  expect(err?.fix).toContain(`name subnets that have one in ${A}subnets`);
});

test("named subnets, one of them without IPv6: that one is named, as named in the annotation", () => {
  const err = refusal({ ...DUALSTACK, [`${A}subnets`]: "subnet-a,subnet-b" }, ONE);
  expect(err?.message).toContain(`subnet subnet-b (named in ${A}subnets) has none`);
});

test("IPv6 on every subnet, or an IPv4 NLB, is not refused", () => {
  expect(build(DUALSTACK, BOTH).ipAddressType).toBe("dualstack");
  expect(refusal({}, NONE)).toBeUndefined();
});
