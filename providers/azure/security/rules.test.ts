import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { config, desired, FE, intent } from "../../../test/unit/support/azure.ts";
import type { AzureConfig } from "../config.ts";
import { inPrefix } from "./rules.ts";

const A = "service.beta.kubernetes.io/";
const RANGES = `${A}azure-allowed-ip-ranges`;
const TAGS = `${A}azure-allowed-service-tags`;
const DENY = `${A}azure-deny-all-except-load-balancer-source-ranges`;
const NO_RULES = `${A}azure-disable-load-balancer-nsg-rule`;
const FLOATING_OFF = `${A}azure-disable-load-balancer-floating-ip`;
const SUBNET = ["10.0.1.0/24"];

function refusal(i: LoadBalancerIntent, cfg: AzureConfig = config()): ConfigurationError {
  try {
    desired(i, { config: cfg });
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected the Service to be refused");
}

const rulesOf = (annotations: Record<string, string>, extra: Partial<LoadBalancerIntent> = {}) =>
  desired(intent({ annotations, ...extra })).securityRules!.map(({ name, access, sources, destination }) => ({
    name,
    access,
    sources,
    destination,
  }));

describe("security rules from cloud-provider-azure's access annotations", () => {
  it("allows exactly the allowed IP ranges, and no longer Internet", () => {
    expect(rulesOf({ [RANGES]: "203.0.113.0/24, 198.51.100.7/32" })).toEqual([
      {
        name: `${FE}-TCP-80`,
        access: "Allow",
        sources: ["198.51.100.7/32", "203.0.113.0/24"],
        destination: SUBNET,
      },
    ]);
  });

  it("allows the ranges and each service tag side by side (a union, as cloud-provider-azure)", () => {
    expect(rulesOf({ [RANGES]: "203.0.113.0/24", [TAGS]: "AzureFrontDoor.Backend" })).toEqual([
      { name: `${FE}-TCP-80`, access: "Allow", sources: ["203.0.113.0/24"], destination: SUBNET },
      {
        name: `${FE}-TCP-80-AzureFrontDoor.Backend`,
        access: "Allow",
        sources: ["AzureFrontDoor.Backend"],
        destination: SUBNET,
      },
    ]);
  });

  it("with IPv6 ranges only, allows nobody to the IPv4 frontend rather than falling back to Internet", () => {
    expect(rulesOf({ [RANGES]: "2001:db8::/32" })).toEqual([]);
  });

  it("with deny-all, adds a Deny rule for every other source, with floating IP to the frontend", () => {
    expect(rulesOf({ [RANGES]: "203.0.113.0/24", [DENY]: "true", [FLOATING_OFF]: "false" })).toEqual([
      { name: `${FE}-TCP-80`, access: "Allow", sources: ["203.0.113.0/24"], destination: "frontend" },
      { name: `${FE}-TCP-80-deny-all`, access: "Deny", sources: ["*"], destination: "frontend" },
    ]);
  });

  it("with deny-all and rules to the backends, keeps Azure's health probes allowed above the Deny rule", () => {
    expect(rulesOf({ [DENY]: "true" }, { sourceRanges: ["10.1.0.0/16"] })).toEqual([
      { name: `${FE}-TCP-80`, access: "Allow", sources: ["10.1.0.0/16"], destination: SUBNET },
      {
        name: `${FE}-TCP-80-AzureLoadBalancer`,
        access: "Allow",
        sources: ["AzureLoadBalancer"],
        destination: SUBNET,
      },
      { name: `${FE}-TCP-80-deny-all`, access: "Deny", sources: ["*"], destination: SUBNET },
    ]);
  });

  it("restricts internal Services the same way: ranges replace VirtualNetwork", () => {
    const internal = { [`${A}azure-load-balancer-internal`]: "true" };
    expect(rulesOf(internal).map((r) => r.sources)).toEqual([["VirtualNetwork"]]);
    expect(rulesOf({ ...internal, [RANGES]: "10.1.0.0/16" }).map((r) => r.sources)).toEqual([
      ["10.1.0.0/16"],
    ]);
  });

  it("makes no rules when they are disabled, so the plan removes Portico's", () => {
    expect(desired(intent({ annotations: { [NO_RULES]: "true" } })).securityRules).toBeUndefined();
  });

  it.each([
    [
      "allowed IP ranges with loadBalancerSourceRanges",
      intent({ annotations: { [RANGES]: "198.51.100.0/24" }, sourceRanges: ["203.0.113.0/24"] }),
      RANGES,
      "one place",
    ],
    [
      "deny-all without any range",
      intent({ annotations: { [DENY]: "true", [TAGS]: "AzureCloud" } }),
      DENY,
      "ranges",
    ],
    [
      "rules disabled with ranges to enforce",
      intent({ annotations: { [NO_RULES]: "true", [RANGES]: "198.51.100.0/24" } }),
      NO_RULES,
      RANGES,
    ],
    ["a range that is not a CIDR", intent({ annotations: { [RANGES]: "198.51.100.1" } }), RANGES, "CIDR"],
    [
      "a range with host bits set",
      intent({ annotations: { [RANGES]: "10.0.0.1/8" } }),
      RANGES,
      "10.0.0.0/8 for the network, or 10.0.0.1/32",
    ],
  ])("refuses %s, naming the annotation", (_what, i, field, text) => {
    const err = refusal(i);
    expect(err.field).toBe(`metadata.annotations[${field}]`);
    expect(`${err.message} ${err.fix}`).toContain(text);
  });

  it("refuses restrictions when the controller has no security group to enforce them in", () => {
    const noNsg = config({ securityGroupName: undefined });
    const cases: Record<string, string>[] = [{ [RANGES]: "198.51.100.0/24" }, { [TAGS]: "AzureCloud" }];
    for (const annotations of cases)
      expect(refusal(intent({ annotations }), noNsg).reason).toBe("SourceRangesUnsupported");
    expect(desired(intent(), { config: noNsg }).securityRules).toBeUndefined();
  });
});

describe("load-balancing rule options", () => {
  it("sends TCP resets unless azure-load-balancer-disable-tcp-reset is true; UDP rules have none", () => {
    const ports = [
      { name: "http", protocol: "TCP" as const, port: 80, nodePort: 30080 },
      { name: "dns", protocol: "UDP" as const, port: 53, nodePort: 30053 },
    ];
    expect(desired(intent({ ports })).rules.map((r) => r.tcpReset)).toEqual([true, undefined]);
    const off = desired(
      intent({ ports, annotations: { [`${A}azure-load-balancer-disable-tcp-reset`]: "true" } }),
    );
    expect(off.rules.map((r) => r.tcpReset)).toEqual([false, undefined]);
  });

  it("turns floating IP on for instance targets when the cluster defaults to it, unless the Service says no", () => {
    const on = config({ floatingIPDefault: true });
    expect(desired(intent(), { config: on }).rules[0]).toMatchObject({ floatingIP: true, backendPort: 80 });
    expect(
      desired(intent({ annotations: { [FLOATING_OFF]: "true" } }), { config: on }).rules[0],
    ).toMatchObject({
      floatingIP: false,
      backendPort: 30080,
    });
    expect(desired(intent()).rules[0]!.floatingIP).toBe(false);
  });

  it("leaves ip-target Services without floating IP under that default, and lets it serve instance targets without node ports", () => {
    const on = config({ floatingIPDefault: true });
    const ip = desired(intent({ annotations: { "portico.io/target-type": "ip" } }), { config: on });
    expect(ip.rules[0]!.floatingIP).toBe(false);
    const noNodePorts = intent({
      allocateNodePorts: false,
      annotations: { "portico.io/target-type": "instance" },
      ports: [{ name: "http", protocol: "TCP", port: 80 }],
    });
    expect(desired(noNodePorts, { config: on }).rules[0]).toMatchObject({
      floatingIP: true,
      backendPort: 80,
    });
    expect(refusal(noNodePorts).reason).toBe("NodePortsDisabled");
  });
});

describe("inPrefix", () => {
  it("tells whether an address is in a prefix, of either family, the same when asked again", () => {
    for (let round = 0; round < 2; round++) {
      expect(inPrefix("10.0.1.7", "10.0.1.0/24")).toBe(true);
      expect(inPrefix("10.0.2.7", "10.0.1.0/24")).toBe(false);
      expect(inPrefix("fd00::5", "fd00::/64")).toBe(true);
      expect(inPrefix("fd01::5", "fd00::/64")).toBe(false);
      // Another family, or something that is no address, is never in it.
      expect(inPrefix("10.0.1.7", "fd00::/64")).toBe(false);
      expect(inPrefix("fd00::5", "10.0.1.0/24")).toBe(false);
      expect(inPrefix("node-a", "10.0.1.0/24")).toBe(false);
    }
  });
});
