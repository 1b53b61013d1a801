import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { canonical, holdsService, recordTag, withoutService, withService } from "./loadBalancerEdit.ts";
import type { LoadBalancer } from "../model.ts";
import { frontendName } from "../names.ts";
import { CLUSTER, desired, FE, intent, OTHER_UID, written } from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const OTHER_FE = frontendName(OTHER_UID);
const other = (overrides = {}) =>
  desired(
    intent(
      { ports: [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }], ...overrides },
      OTHER_UID,
      "dns",
    ),
  );
const names = (list: { name?: string }[] | undefined) => (list ?? []).map((c) => c.name).sort();

describe("withService", () => {
  it("creates the load balancer, Standard and tagged for the cluster, with the Service's parts", () => {
    const d = desired();
    const lb = withService(undefined, d);
    expect(lb).toMatchObject({ location: "eastus", sku: { name: "Standard", tier: "Regional" } });
    expect(lb.tags).toEqual({ "portico.io-cluster": CLUSTER, "portico.io-resource": "loadbalancer" });
    expect(lb.frontendIPConfigurations).toEqual([{ name: FE, publicIPAddress: { id: d.publicIp!.id } }]);
    expect(lb.backendAddressPools).toEqual([
      {
        name: "portico-nodes",
        loadBalancerBackendAddresses: [
          { name: "node-a", ipAddress: "10.0.1.10", virtualNetwork: { id: d.vnetId } },
          { name: "node-b", ipAddress: "10.0.1.11", virtualNetwork: { id: d.vnetId } },
        ],
      },
    ]);
    expect(lb.probes).toEqual([
      { name: `${FE}-TCP-80`, protocol: "Tcp", port: 30080, intervalInSeconds: 5, numberOfProbes: 2 },
    ]);
    const id = d.loadBalancer.id;
    expect(lb.loadBalancingRules).toEqual([
      {
        name: `${FE}-TCP-80`,
        frontendIPConfiguration: { id: `${id}/frontendIPConfigurations/${FE}` },
        backendAddressPool: { id: `${id}/backendAddressPools/portico-nodes` },
        backendAddressPools: [{ id: `${id}/backendAddressPools/portico-nodes` }],
        probe: { id: `${id}/probes/${FE}-TCP-80` },
        protocol: "Tcp",
        frontendPort: 80,
        backendPort: 30080,
        enableFloatingIP: false,
        idleTimeoutInMinutes: 4,
        enableTcpReset: true,
        disableOutboundSnat: true,
        loadDistribution: "Default",
      },
    ]);
  });

  it("returns the load balancer itself when the Service's parts are already as desired", () => {
    const d = desired();
    const lb = written(d);
    expect(withService(lb, d)).toBe(lb);
  });

  it("adds a second Service beside the first, sharing the node pool and touching nothing of the first", () => {
    const first = written(desired());
    const lb = withService(first, other());
    expect(names(lb.frontendIPConfigurations)).toEqual([FE, OTHER_FE].sort());
    expect(names(lb.backendAddressPools)).toEqual(["portico-nodes"]);
    expect(names(lb.loadBalancingRules)).toEqual([`${FE}-TCP-80`, `${OTHER_FE}-UDP-53`].sort());
    for (const key of ["frontendIPConfigurations", "probes", "loadBalancingRules"] as const)
      for (const child of first[key] ?? []) expect(lb[key]).toContainEqual(child);
  });

  it("replaces only the Service's own rules and probes when its ports change", () => {
    const both = withService(written(desired()), other());
    const d = desired(
      intent({
        ports: [
          { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
          { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
        ],
      }),
    );
    const lb = withService(both, d);
    expect(names(lb.loadBalancingRules)).toEqual(
      [`${FE}-TCP-443`, `${FE}-TCP-80`, `${OTHER_FE}-UDP-53`].sort(),
    );
    const fewer = withService(
      lb,
      desired(intent({ ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 30443 }] })),
    );
    expect(names(fewer.loadBalancingRules)).toEqual([`${FE}-TCP-443`, `${OTHER_FE}-UDP-53`].sort());
    expect(names(fewer.probes)).toEqual([`${FE}-TCP-443`, `${OTHER_FE}-UDP-53`].sort());
  });

  it("moves the Service to its own pod pool and drops the node pool once no rule uses it", () => {
    const lb = written(desired());
    const ip = desired(
      intent({
        annotations: { "portico.io/target-type": "ip" },
        endpoints: [{ ip: "10.0.64.1", ports: { http: 8080 } }],
      }),
    );
    const moved = withService(lb, ip);
    expect(names(moved.backendAddressPools)).toEqual([FE]);
    expect(moved.loadBalancingRules![0]!.backendAddressPool!.id).toMatch(
      new RegExp(`/backendAddressPools/${FE}$`),
    );
    const back = withService(moved, desired());
    expect(names(back.backendAddressPools)).toEqual(["portico-nodes"]);
  });

  it("keeps the node pool while another Service's rules use it", () => {
    const both = withService(written(desired()), other());
    const ip = desired(intent({ annotations: { "portico.io/target-type": "ip" } }));
    expect(names(withService(both, ip).backendAddressPools)).toEqual([FE, "portico-nodes"].sort());
  });

  it("keeps the address ARM chose for a dynamic private frontend, and lets a requested one replace it", () => {
    const internal = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }));
    const lb = written(internal);
    lb.frontendIPConfigurations![0]!.privateIPAddress = "10.0.1.4";
    expect(withService(lb, internal)).toBe(lb);
    const updated = withService(
      lb,
      desired(
        intent({
          annotations: { [`${A}azure-load-balancer-internal`]: "true" },
          ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 30443 }],
        }),
      ),
    );
    expect(updated.frontendIPConfigurations![0]!.privateIPAddress).toBe("10.0.1.4");
    const pinned = withService(
      lb,
      desired(
        intent({
          annotations: {
            [`${A}azure-load-balancer-internal`]: "true",
            [`${A}azure-load-balancer-ipv4`]: "10.0.1.99",
          },
        }),
      ),
    );
    expect(pinned.frontendIPConfigurations![0]).toMatchObject({
      privateIPAllocationMethod: "Static",
      privateIPAddress: "10.0.1.99",
    });
  });

  it("records a Service without a Portico public IP in a tag, and drops the tag when one records it", () => {
    const internal = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }));
    const lb = withService(undefined, internal);
    expect(lb.tags![recordTag(FE)]).toBe("shop/web");
    expect(withService(lb, { ...internal, recordOnLoadBalancer: false }).tags).not.toHaveProperty(
      recordTag(FE),
    );
  });

  it("refuses to record more Services than ARM allows tags", () => {
    const internal = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }));
    const full = written(internal);
    full.tags = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`t${i}`, "x"]));
    full.tags["portico.io-cluster"] = CLUSTER;
    expect(() => withService(full, internal)).toThrow(ConfigurationError);
  });

  it("refuses a load balancer Portico did not make for this cluster, or a Basic one", () => {
    const d = desired();
    const users: LoadBalancer = { name: CLUSTER, sku: { name: "Standard" }, tags: {} };
    expect(() => withService(users, d)).toThrow(/Portico did not make/);
    const otherCluster = { ...users, tags: { "portico.io-cluster": "elsewhere" } };
    expect(() => withService(otherCluster, d)).toThrow(/Portico did not make/);
    const basic = { ...users, sku: { name: "Basic" }, tags: { "portico.io-cluster": CLUSTER } };
    expect(() => withService(basic, d)).toThrow(/is Basic/);
  });
});

describe("withoutService", () => {
  it("takes out exactly the Service's parts and record, leaving the others", () => {
    const internal = desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }));
    const both = withService(
      written(internal),
      desired(intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }, OTHER_UID, "dns")),
    );
    const lb = withoutService(both, FE)!;
    expect(names(lb.frontendIPConfigurations)).toEqual([OTHER_FE]);
    expect(names(lb.loadBalancingRules)).toEqual([`${OTHER_FE}-TCP-80`]);
    expect(lb.tags).not.toHaveProperty(recordTag(FE));
    expect(lb.tags![recordTag(OTHER_FE)]).toBe("shop/dns");
  });

  it("says to delete the load balancer when its last frontend goes", () => {
    expect(withoutService(written(desired()), FE)).toBeUndefined();
  });

  it("returns the load balancer itself when it holds nothing of the Service", () => {
    const lb = written(desired());
    expect(withoutService(lb, OTHER_FE)).toBe(lb);
    expect(holdsService(lb, OTHER_FE)).toBe(false);
    expect(holdsService(lb, FE)).toBe(true);
  });

  it("holds the Service by any one part withoutService would take out, and only by those", () => {
    const lb = written(desired());
    const bare: LoadBalancer = {
      ...lb,
      tags: Object.fromEntries(Object.entries(lb.tags ?? {}).filter(([k]) => k !== recordTag(FE))),
      frontendIPConfigurations: (lb.frontendIPConfigurations ?? []).filter((f) => f.name !== FE),
      backendAddressPools: (lb.backendAddressPools ?? []).filter((p) => p.name !== FE),
      probes: [],
      loadBalancingRules: [],
    };
    expect(holdsService(bare, FE)).toBe(false);
    expect(withoutService(bare, FE)).toBe(bare);
    const parts: Partial<LoadBalancer>[] = [
      { tags: { ...bare.tags, [recordTag(FE)]: "shop/web" } },
      { frontendIPConfigurations: lb.frontendIPConfigurations },
      { probes: lb.probes },
      { loadBalancingRules: lb.loadBalancingRules },
      { backendAddressPools: [...(bare.backendAddressPools ?? []), { name: FE }] },
    ];
    for (const part of parts) {
      const holding = { ...bare, ...part };
      expect(holdsService(holding, FE)).toBe(true);
      expect(withoutService(holding, FE)).not.toBe(holding);
    }
  });

  it("drops the node pool with the last rule that used it", () => {
    const ip = desired(intent({ annotations: { "portico.io/target-type": "ip" } }, OTHER_UID, "pods"));
    const both = withService(written(desired()), ip);
    expect(names(withoutService(both, FE)!.backendAddressPools)).toEqual([OTHER_FE]);
  });
});

describe("canonical", () => {
  it("ignores what ARM adds or reorders, and sees what a write would change", () => {
    const lb = written(desired());
    const asRead: LoadBalancer = {
      ...lb,
      frontendIPConfigurations: lb.frontendIPConfigurations!.map((f) => ({
        ...f,
        privateIPAllocationMethod: "Dynamic",
      })),
      loadBalancingRules: lb.loadBalancingRules!.map((r) => ({
        ...r,
        frontendIPConfiguration: { id: r.frontendIPConfiguration!.id!.toUpperCase() },
      })),
    };
    expect(canonical(asRead)).toBe(canonical(lb));
    const changed = { ...lb, probes: lb.probes!.map((p) => ({ ...p, port: 1 })) };
    expect(canonical(changed)).not.toBe(canonical(lb));
  });
});
