import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { AZURE_LIMITS, assertWithinLimits, type AzureLimits } from "./limits.ts";
import type {
  DesiredSecurityRule,
  DesiredService,
  LoadBalancer,
  NetworkSecurityGroup,
  Observed,
} from "../model.ts";
import { withServiceRules } from "../security/rulesEdit.ts";
import { desired, intent, written } from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const INTERNAL = { [`${A}azure-load-balancer-internal`]: "true" };
const TARGET = "portico.io/target-type";
const NODES = ["10.0.1.10", "10.0.1.11"];

const uid = (n: number) => `0a1b2c3d-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** Service `n`: one TCP port per entry of `ports` (80 + n by default), on the two nodes. */
function service(
  n: number,
  opts: {
    ports?: number[];
    annotations?: Record<string, string>;
    endpoints?: string[];
    sourceRanges?: string[];
  } = {},
): DesiredService {
  const ports = (opts.ports ?? [80 + n]).map((port) => ({
    name: `p${port}`,
    protocol: "TCP" as const,
    port,
    nodePort: 30000 + port,
  }));
  return desired(
    intent(
      {
        ports,
        annotations: opts.annotations ?? {},
        sourceRanges: opts.sourceRanges ?? [],
        endpoints: (opts.endpoints ?? []).map((ip) => ({
          ip,
          nodeName: "node-a",
          ports: Object.fromEntries(ports.map((p) => [p.name, 8000 + p.port])),
        })),
      },
      uid(n),
      `svc-${n}`,
    ),
  );
}

/** The Service's security rules with the addresses given, not the ones desired/desired.ts computes. */
function withRules(
  d: DesiredService,
  rule: Partial<DesiredSecurityRule>,
  count = d.rules.length,
): DesiredService {
  const base = d.securityRules![0]!;
  const rules = Array.from({ length: count }, (_, i) => ({
    ...base,
    name: `${d.frontendName}-TCP-${i}`,
    ...rule,
  }));
  return { ...d, securityRules: rules };
}

/** ARM after each of `services` was written in turn: their load balancers and security rules. */
function world(services: DesiredService[], nsgExtra: NetworkSecurityGroup["securityRules"] = []): Observed {
  const lbs = new Map<string, LoadBalancer>();
  let nsg: NetworkSecurityGroup = { name: "nsg", securityRules: [...nsgExtra] };
  services.forEach((d, i) => {
    lbs.set(d.loadBalancer.name, written(d, lbs.get(d.loadBalancer.name)));
    nsg = withServiceRules(nsg, {
      frontend: d.frontendName,
      description: d.securityRuleDescription,
      rules: d.securityRules!,
      frontendAddress: `20.0.0.${i + 1}`,
    });
  });
  return { loadBalancers: [...lbs.values()], publicIps: [], securityGroup: nsg };
}

function refusal(d: DesiredService, observed: Observed, limits: Partial<AzureLimits>): ConfigurationError {
  try {
    assertWithinLimits(d, observed, limits);
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected the Service to be refused");
}

const userRule = (name: string, priority: number, extra: object = {}) => ({
  name,
  priority,
  access: "Allow",
  direction: "Inbound",
  protocol: "Tcp",
  sourcePortRange: "*",
  destinationPortRange: "22",
  sourceAddressPrefix: "198.51.100.0/24",
  destinationAddressPrefix: "10.0.1.0/24",
  ...extra,
});

describe("assertWithinLimits", () => {
  it("uses Azure's documented limits by default", () => {
    expect(AZURE_LIMITS).toEqual({
      frontendIPConfigurationsPerLoadBalancer: 600,
      rulesPerLoadBalancer: 1500,
      rulesPerBackendAddress: 300,
      securityRulesPerGroup: 1000,
      addressPrefixesPerSecurityGroup: 4000,
    });
    expect(() => assertWithinLimits(service(3), world([service(1), service(2)]))).not.toThrow();
  });

  describe("frontends per load balancer", () => {
    const two = () => world([service(1), service(2)]);

    it("passes at the limit and refuses one over, naming per-Service load balancers as the fix", () => {
      expect(() =>
        assertWithinLimits(service(3), two(), { frontendIPConfigurationsPerLoadBalancer: 3 }),
      ).not.toThrow();
      const err = refusal(service(3), two(), { frontendIPConfigurationsPerLoadBalancer: 2 });
      expect(err.reason).toBe("TooManyFrontends");
      expect(err.field).toBe("loadBalancerPerService (controller Azure config)");
      expect(err.message).toContain("3 frontends");
      expect(err.message).toContain("allows 2");
      expect(err.fix).toContain("loadBalancerPerService");
    });

    it("counts a Service's own frontend once when it is already there", () => {
      expect(() =>
        assertWithinLimits(service(2), two(), { frontendIPConfigurationsPerLoadBalancer: 2 }),
      ).not.toThrow();
    });

    it("counts only the load balancer the Service goes on", () => {
      const internal = service(3, { annotations: INTERNAL });
      expect(() =>
        assertWithinLimits(internal, two(), { frontendIPConfigurationsPerLoadBalancer: 2 }),
      ).not.toThrow();
    });

    it("lets a Service already on a load balancer past a lowered limit stay, as its change adds nothing", () => {
      expect(() =>
        assertWithinLimits(service(2), two(), { frontendIPConfigurationsPerLoadBalancer: 1 }),
      ).not.toThrow();
    });

    it("is not checked when the limit is 0", () => {
      expect(() =>
        assertWithinLimits(service(3), two(), { frontendIPConfigurationsPerLoadBalancer: 0 }),
      ).not.toThrow();
    });
  });

  describe("rules per load balancer", () => {
    const observed = () => world([service(1), service(2, { ports: [90, 91] })]);

    it("passes at the limit and refuses one over, naming spec.ports", () => {
      expect(() => assertWithinLimits(service(3), observed(), { rulesPerLoadBalancer: 4 })).not.toThrow();
      const err = refusal(service(3), observed(), { rulesPerLoadBalancer: 3 });
      expect(err.reason).toBe("TooManyRules");
      expect(err.field).toBe("spec.ports");
      expect(err.message).toContain("4 load-balancing rules");
    });

    it("replaces a Service's own rules rather than adding to them", () => {
      const more = service(2, { ports: [90, 91, 92] });
      expect(() =>
        assertWithinLimits(service(2, { ports: [90, 91] }), observed(), { rulesPerLoadBalancer: 3 }),
      ).not.toThrow();
      expect(() => assertWithinLimits(more, observed(), { rulesPerLoadBalancer: 4 })).not.toThrow();
      expect(refusal(more, observed(), { rulesPerLoadBalancer: 3 }).reason).toBe("TooManyRules");
    });

    it("passes a change that removes rules even where the load balancer is past the limit", () => {
      expect(() =>
        assertWithinLimits(service(2, { ports: [90] }), observed(), { rulesPerLoadBalancer: 1 }),
      ).not.toThrow();
    });
  });

  describe("rules per backend address", () => {
    const two = () => world([service(1), service(2)]);

    it("counts every instance-target rule as reaching every node, and names ip targets as the fix", () => {
      expect(() => assertWithinLimits(service(3), two(), { rulesPerBackendAddress: 3 })).not.toThrow();
      const err = refusal(service(3), two(), { rulesPerBackendAddress: 2 });
      expect(err.reason).toBe("TooManyRulesPerBackend");
      // Instance targets by default: the Service carries no target-type annotation, its ports are what it adds.
      expect(err.field).toBe("spec.ports");
      expect(err.message).toMatch(
        /backend address 10\.0\.1\.1[01] would be reached by 3 load-balancing rules/,
      );
      expect(err.fix).toContain(`${TARGET}: ip`);
      const asked = refusal(service(3, { annotations: { [TARGET]: "instance" } }), two(), {
        rulesPerBackendAddress: 2,
      });
      expect(asked.field).toBe(`metadata.annotations[${TARGET}]`);
    });

    it("counts the rules of every load balancer, internal and public", () => {
      const observed = world([service(1), service(2, { annotations: INTERNAL })]);
      expect(observed.loadBalancers).toHaveLength(2);
      expect(refusal(service(3), observed, { rulesPerBackendAddress: 2 }).reason).toBe(
        "TooManyRulesPerBackend",
      );
    });

    it("counts a Service's own rules once, and not on the load balancer it moves away from", () => {
      expect(() => assertWithinLimits(service(2), two(), { rulesPerBackendAddress: 2 })).not.toThrow();
      const moving = service(2, { annotations: INTERNAL });
      expect(() => assertWithinLimits(moving, two(), { rulesPerBackendAddress: 2 })).not.toThrow();
    });

    it("lets ip targets through: their rules reach pods, not the nodes", () => {
      const pods = service(3, { annotations: { [TARGET]: "ip" }, endpoints: ["10.0.64.5"] });
      expect(() => assertWithinLimits(pods, two(), { rulesPerBackendAddress: 2 })).not.toThrow();
    });

    it("names spec.ports when one Service's own pool is past it", () => {
      const pods = service(3, {
        annotations: { [TARGET]: "ip" },
        endpoints: ["10.0.64.5"],
        ports: [80, 81, 82],
      });
      expect(() => assertWithinLimits(pods, two(), { rulesPerBackendAddress: 3 })).not.toThrow();
      const err = refusal(pods, two(), { rulesPerBackendAddress: 2 });
      expect(err.field).toBe("spec.ports");
      expect(err.message).toContain("backend address 10.0.64.5 would be reached by 3");
    });

    it("lets a Service stay unchanged where nodes are already past the limit, and take rules away", () => {
      const observed = world([service(1), service(2, { ports: [90, 91] })]);
      expect(() =>
        assertWithinLimits(service(2, { ports: [90, 91] }), observed, { rulesPerBackendAddress: 2 }),
      ).not.toThrow();
      expect(() =>
        assertWithinLimits(service(2, { ports: [90] }), observed, { rulesPerBackendAddress: 1 }),
      ).not.toThrow();
    });

    it("counts rules of load balancers Portico did not make, by virtual network and address", () => {
      const pool = (name: string, vnet: string) => ({
        name,
        loadBalancerBackendAddresses: NODES.map((ip) => ({ ipAddress: ip, virtualNetwork: { id: vnet } })),
      });
      const users = (vnet: string): LoadBalancer => ({
        name: "users",
        backendAddressPools: [pool("theirs", vnet)],
        loadBalancingRules: [
          { name: "r", backendAddressPool: { id: "/lb/users/backendAddressPools/theirs" } },
        ],
      });
      const elsewhere = two();
      elsewhere.loadBalancers.push(users("/other/vnet"));
      expect(() => assertWithinLimits(service(3), elsewhere, { rulesPerBackendAddress: 3 })).not.toThrow();
      const same = two();
      same.loadBalancers.push(users(service(1).vnetId));
      expect(refusal(service(3), same, { rulesPerBackendAddress: 3 }).message).toContain("reached by 4");
    });
  });

  describe("security rules per group", () => {
    const observed = () => world([service(1), service(2)], [userRule("ssh", 200)]);

    it("counts the group's other rules, the user's included; passes at the limit and refuses one over", () => {
      expect(() => assertWithinLimits(service(3), observed(), { securityRulesPerGroup: 4 })).not.toThrow();
      const err = refusal(service(3), observed(), { securityRulesPerGroup: 3 });
      expect(err.reason).toBe("TooManySecurityRules");
      expect(err.field).toBe("spec.ports");
      expect(err.message).toContain("nsg would have 4 rules");
    });

    it("counts one rule per port and allowed source", () => {
      const tagged = service(3, {
        annotations: { [`${A}azure-allowed-service-tags`]: "AzureFrontDoor.Backend,Internet" },
      });
      expect(tagged.securityRules).toHaveLength(2);
      expect(() => assertWithinLimits(tagged, observed(), { securityRulesPerGroup: 5 })).not.toThrow();
      expect(refusal(tagged, observed(), { securityRulesPerGroup: 4 }).reason).toBe("TooManySecurityRules");
    });

    it("replaces a Service's own rules, so re-applying or shrinking passes", () => {
      expect(() => assertWithinLimits(service(2), observed(), { securityRulesPerGroup: 3 })).not.toThrow();
      const two = world([service(1), service(2, { ports: [90, 91] })]);
      expect(() =>
        assertWithinLimits(service(2, { ports: [90] }), two, { securityRulesPerGroup: 1 }),
      ).not.toThrow();
    });

    it("is not checked without a security group", () => {
      const observed = world([service(1), service(2)]);
      delete observed.securityGroup;
      expect(() => assertWithinLimits(service(3), observed, { securityRulesPerGroup: 1 })).not.toThrow();
    });
  });

  describe("addresses in the security group's rules", () => {
    const dest = (n: number, destination: string[], count?: number) =>
      withRules(service(n), { destination }, count);
    const observed = () =>
      world(
        [dest(1, ["10.0.1.0/24"]), dest(2, NODES)],
        [userRule("ssh", 200, { destinationAddressPrefix: "*" })],
      );

    it("counts destinations as the desired rules name them; passes at the limit and refuses one over", () => {
      // 1 + 2 before; tags and * do not count.
      expect(() =>
        assertWithinLimits(dest(3, ["10.0.1.0/24", "10.0.2.0/24"]), observed(), {
          addressPrefixesPerSecurityGroup: 5,
        }),
      ).not.toThrow();
      const err = refusal(dest(3, ["10.0.1.0/24", "10.0.2.0/24", "10.0.9.9"]), observed(), {
        addressPrefixesPerSecurityGroup: 5,
      });
      expect(err.reason).toBe("TooManySecurityRuleAddresses");
      // Floating IP off by default: no annotation of the Service says so, its ports are what it adds.
      expect(err.field).toBe("spec.ports");
      expect(err.message).toContain("6 destination addresses");
      expect(err.fix).toContain("floating IP");
      for (const key of ["portico.io/floating-ip", `${A}azure-disable-load-balancer-floating-ip`]) {
        const off = withRules(service(3, { annotations: { [key]: key.startsWith(A) ? "true" : "false" } }), {
          destination: ["10.0.1.0/24", "10.0.2.0/24", "10.0.9.9"],
        });
        expect(refusal(off, observed(), { addressPrefixesPerSecurityGroup: 5 }).field).toBe(
          `metadata.annotations[${key}]`,
        );
      }
    });

    it("counts every rule's destinations, one rule per port", () => {
      expect(
        refusal(dest(3, ["10.0.1.0/24"], 3), observed(), { addressPrefixesPerSecurityGroup: 5 }).message,
      ).toContain("6 destination addresses");
    });

    it("counts a floating IP rule as the frontend's one address, before the address is known", () => {
      const floating = withRules(service(3), { destination: "frontend" }, 2);
      expect(() =>
        assertWithinLimits(floating, observed(), { addressPrefixesPerSecurityGroup: 5 }),
      ).not.toThrow();
      const err = refusal(floating, observed(), { addressPrefixesPerSecurityGroup: 4 });
      expect(err.field).toBe("spec.ports");
      expect(err.message).toContain("5 destination addresses");
    });

    it("counts source ranges on their own, and not service tags, naming where the Service lists them", () => {
      const listed = ["203.0.113.0/24", "198.51.100.7/32"];
      const ranges = withRules(service(3, { sourceRanges: listed }), {
        sources: ["203.0.113.0/24", "198.51.100.7", "Internet"],
        destination: ["10.0.1.0/24"],
      });
      // Sources before: the user's one range.
      expect(() =>
        assertWithinLimits(ranges, observed(), { addressPrefixesPerSecurityGroup: 4 }),
      ).not.toThrow();
      const err = refusal(ranges, observed(), { addressPrefixesPerSecurityGroup: 2 });
      expect(err.field).toBe("spec.loadBalancerSourceRanges");
      expect(err.message).toContain("3 source addresses");
      const elsewhere: [Record<string, string>, string[], string][] = [
        [{ [`${A}azure-allowed-ip-ranges`]: listed.join(",") }, [], `${A}azure-allowed-ip-ranges`],
        [
          { [`${A}load-balancer-source-ranges`]: listed.join(",") },
          listed,
          `${A}load-balancer-source-ranges`,
        ],
      ];
      for (const [annotations, sourceRanges, key] of elsewhere) {
        const d = withRules(service(3, { annotations, sourceRanges }), {
          sources: ["203.0.113.0/24", "198.51.100.7"],
          destination: ["10.0.1.0/24"],
        });
        expect(refusal(d, observed(), { addressPrefixesPerSecurityGroup: 2 }).field).toBe(
          `metadata.annotations[${key}]`,
        );
      }
    });

    it("replaces a Service's own addresses, so re-applying or narrowing passes", () => {
      expect(() =>
        assertWithinLimits(dest(2, NODES), observed(), { addressPrefixesPerSecurityGroup: 3 }),
      ).not.toThrow();
      expect(() =>
        assertWithinLimits(dest(2, ["10.0.1.0/24"]), observed(), { addressPrefixesPerSecurityGroup: 1 }),
      ).not.toThrow();
      expect(
        refusal(dest(2, [...NODES, "10.0.1.12"]), observed(), { addressPrefixesPerSecurityGroup: 3 }).reason,
      ).toBe("TooManySecurityRuleAddresses");
    });
  });
});
