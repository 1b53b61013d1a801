import { describe, expect, it } from "vitest";
import type { LoadBalancerIntent } from "../../provider.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import type { AzureConfig } from "../config.ts";
import type { LoadBalancerConfiguration } from "./lbConfigurations.ts";
import type { AzureLimits } from "../limits/limitValues.ts";
import type { DesiredService, LoadBalancer, Observed, PublicIPAddress } from "../model.ts";
import { CONFIGURATIONS_ANNOTATION } from "./eligibility.ts";
import { currentConfiguration, placedSides, placementNotices, ruleCounts } from "./placeSides.ts";
import {
  CLUSTER,
  config,
  intent,
  network,
  publicIp,
  refusal,
  written,
} from "../../../test/unit/support/azure.ts";

const VMSS = "azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachineScaleSets";
const NODES = [
  { name: "node-a", internalIP: "10.0.1.10", providerID: `${VMSS}/pool-a/virtualMachines/0` },
  { name: "node-b", internalIP: "10.0.1.11", providerID: `${VMSS}/pool-b/virtualMachines/0` },
];
const K: LoadBalancerConfiguration = { name: CLUSTER, primaryVMSet: "pool-a" };
const B: LoadBalancerConfiguration = { name: "lb-b", primaryVMSet: "pool-b" };
const NO_LIMITS: Partial<AzureLimits> = {};
const CONFIG = "multipleStandardLoadBalancerConfigurations (controller Azure config)";

const uid = (n: number) => `0a1b2c3d-0000-4000-8000-${String(n).padStart(12, "0")}`;

function svc(n: number, over: Partial<LoadBalancerIntent> = {}): LoadBalancerIntent {
  return intent(
    { nodes: NODES, ports: [{ name: "http", protocol: "TCP", port: 80 + n, nodePort: 30080 + n }], ...over },
    uid(n),
    `svc-${n}`,
  );
}

function multi(limits = NO_LIMITS, configs = [K, B]): AzureConfig {
  return config({ multipleStandardLoadBalancerConfigurations: configs, limits });
}

function place(i: LoadBalancerIntent, observed: Observed, cfg: AzureConfig = multi()): DesiredService[] {
  return placedSides(
    i,
    parseAzureSettings(i.annotations),
    { cluster: CLUSTER, config: cfg, network },
    observed,
  );
}

/** ARM after each Service was placed and written in turn. */
function world(
  services: LoadBalancerIntent[],
  cfg: AzureConfig = multi(),
  publicIps: PublicIPAddress[] = [],
): Observed {
  let observed: Observed = { loadBalancers: [], publicIps };
  for (const i of services)
    for (const d of place(i, observed, cfg)) {
      const lbs = observed.loadBalancers;
      const before = lbs.find((l) => l.name === d.loadBalancer.name);
      observed = { ...observed, loadBalancers: [...lbs.filter((l) => l !== before), written(d, before)] };
    }
  return observed;
}

const poolIps = (d: DesiredService) => d.pool.addresses.map((a) => a.ip);
const lbNamed = (o: Observed, name: string): LoadBalancer => o.loadBalancers.find((l) => l.name === name)!;

describe("placedSides without configurations", () => {
  it("uses the cluster's load balancer with every node, as before", () => {
    const [d] = place(svc(1), { loadBalancers: [], publicIps: [] }, config());
    expect(d!.loadBalancer.name).toBe(CLUSTER);
    expect(poolIps(d!)).toEqual(["10.0.1.10", "10.0.1.11"]);
  });
});

describe("placedSides with two configured load balancers", () => {
  it("places the first Service on the first, with only that load balancer's nodes in its pool", () => {
    const [d] = place(svc(1), { loadBalancers: [], publicIps: [] });
    expect(d!.loadBalancer.name).toBe(CLUSTER);
    expect(d!.loadBalancer.tags).toEqual({
      "portico.io-cluster": CLUSTER,
      "portico.io-resource": "loadbalancer",
    });
    expect(poolIps(d!)).toEqual(["10.0.1.10"]);
  });

  it("places the next on the one with fewer rules, with its nodes", () => {
    const [d] = place(svc(2), world([svc(1)]));
    expect(d!.loadBalancer.name).toBe("lb-b");
    expect(poolIps(d!)).toEqual(["10.0.1.11"]);
  });

  it("an internal Service goes on the internal load balancer of its configuration", () => {
    const internal = { "service.beta.kubernetes.io/azure-load-balancer-internal": "true" };
    const [d] = place(svc(3, { annotations: internal }), world([svc(1), svc(2)]));
    expect(d!.loadBalancer.name).toBe(`${CLUSTER}-internal`);
  });

  it("a Service stays where it is when another load balancer empties", () => {
    const observed = world([svc(1), svc(2), svc(3)]);
    expect(currentConfiguration([K, B], observed, CLUSTER, uid(3), false)).toBe(CLUSTER);
    const emptied = { ...observed, loadBalancers: observed.loadBalancers.filter((l) => l.name !== "lb-b") };
    expect(place(svc(3), emptied)[0]!.loadBalancer.name).toBe(CLUSTER);
  });

  it("a Service placed again changes nothing: the same load balancer and parts", () => {
    const observed = world([svc(1), svc(2)]);
    const again = place(svc(2), observed)[0]!;
    expect(written(again, lbNamed(observed, "lb-b"))).toEqual(lbNamed(observed, "lb-b"));
  });

  it("moves when its annotation names another load balancer", () => {
    const observed = world([svc(1), svc(2)]);
    const moved = svc(1, { annotations: { [CONFIGURATIONS_ANNOTATION]: "lb-b" } });
    expect(place(moved, observed)[0]!.loadBalancer.name).toBe("lb-b");
  });

  it("follows a namespace selector", () => {
    const team: LoadBalancerConfiguration = {
      ...B,
      serviceNamespaceSelector: { matchLabels: { team: "blue" } },
    };
    const cfg = multi(NO_LIMITS, [K, team]);
    const observed = world([], cfg);
    expect(place(svc(1, { namespaceLabels: { team: "blue" } }), observed, cfg)[0]!.loadBalancer.name).toBe(
      "lb-b",
    );
    expect(place(svc(1), observed, cfg)[0]!.loadBalancer.name).toBe(CLUSTER);
  });

  it("counts rules per load balancer", () => {
    const observed = world([svc(1), svc(2), svc(3)]);
    expect(ruleCounts([K, B], observed, false)).toEqual(
      new Map([
        [CLUSTER.toLowerCase(), 2],
        ["lb-b", 1],
      ]),
    );
    expect(ruleCounts([K, B], observed, true)).toEqual(new Map());
  });
});

describe("placedSides within Azure's limits, per load balancer", () => {
  it("a Service that does not fit on the emptiest goes on another with room", () => {
    const cfg = multi({ frontendIPConfigurationsPerLoadBalancer: 1 });
    const observed = world([svc(1)], cfg);
    expect(place(svc(2), observed, cfg)[0]!.loadBalancer.name).toBe("lb-b");
  });

  it("a Service that fits on none is refused, with each load balancer's reason and the fix", () => {
    const cfg = multi({ rulesPerLoadBalancer: 1 });
    const observed = world([svc(1), svc(2)], cfg);
    const err = refusal(() => place(svc(3), observed, cfg));
    expect(err.reason).toBe("NoLoadBalancerWithRoom");
    // Placed by the configurations, not by an annotation it does not carry.
    expect(err.field).toBe(CONFIG);
    expect(err.message).toContain(`${CLUSTER}: load balancer ${CLUSTER} would have 2 load-balancing rules`);
    expect(err.message).toContain("lb-b: load balancer lb-b would have 2 load-balancing rules");
    // The fixes of a single load balancer (loadBalancerPerService) are not offered.
    expect(err.message).not.toContain("loadBalancerPerService");
    expect(err.fix).toContain("add a load balancer to multipleStandardLoadBalancerConfigurations");
    const named = svc(3, { annotations: { [CONFIGURATIONS_ANNOTATION]: `${CLUSTER},lb-b` } });
    expect(refusal(() => place(named, observed, cfg)).field).toBe(
      `metadata.annotations[${CONFIGURATIONS_ANNOTATION}]`,
    );
  });

  it("rules per backend address count only the nodes of the Service's load balancer", () => {
    const cfg = multi({ rulesPerBackendAddress: 1 });
    const observed = world([svc(1)], cfg);
    expect(place(svc(2), observed, cfg)[0]!.loadBalancer.name).toBe("lb-b");
    const err = refusal(() => place(svc(3), world([svc(1), svc(2)], cfg), cfg));
    expect(err.reason).toBe("NoLoadBalancerWithRoom");
    expect(err.message).toContain("backend address 10.0.1.10 would be reached by 2");
    expect(err.message).toContain("backend address 10.0.1.11 would be reached by 2");
  });

  it("a Service whose change does not fit where it is stays and is refused, not moved", () => {
    const cfg = multi({ rulesPerLoadBalancer: 1 });
    const observed = world([svc(1)], cfg);
    const more = svc(1, {
      ports: [
        { name: "http", protocol: "TCP", port: 81, nodePort: 30081 },
        { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
      ],
    });
    const err = refusal(() => place(more, observed, cfg));
    expect(err.reason).toBe("TooManyRules");
    expect(err.field).toBe(CONFIG);
    expect(err.message).toContain(`load balancer ${CLUSTER} would have 2 load-balancing rules`);
    expect(err.message).toContain(`the Service stays on ${CLUSTER}, where it is`);
    expect(err.fix).toContain(CONFIGURATIONS_ANNOTATION);
    expect(err.message).not.toContain("loadBalancerPerService");
  });

  it("a limit of the security group, the same wherever the Service goes, is refused as it is", () => {
    const cfg = multi({ securityRulesPerGroup: 1 });
    const nsg = { name: "nsg", securityRules: [{ name: "user-rule", priority: 100 }] };
    const err = refusal(() => place(svc(1), { loadBalancers: [], publicIps: [], securityGroup: nsg }, cfg));
    expect(err.reason).toBe("TooManySecurityRules");
  });
});

describe("placedSides with a shared address", () => {
  it("a Service sharing another's public IP goes on that Service's load balancer, where the address is", () => {
    const pip = "service.beta.kubernetes.io/azure-pip-name";
    const ips = [publicIp("shared-ip")];
    const first = svc(1, { annotations: { [pip]: "shared-ip" } });
    const observed = world([first], multi(), ips);
    const second = svc(2, { annotations: { [pip]: "shared-ip" } });
    expect(place(second, observed)[0]!.loadBalancer.name).toBe(CLUSTER);
    // Without the shared address the emptier one is taken.
    expect(place(svc(2), observed)[0]!.loadBalancer.name).toBe("lb-b");
  });
});

describe("placedSides and the nodes", () => {
  it("a Service that selects its nodes itself keeps them all, whichever load balancer it is on", () => {
    const own = svc(1, { annotations: { "portico.io/target-node-labels": "role=edge" } });
    const [d] = place(own, { loadBalancers: [], publicIps: [] });
    expect(d!.loadBalancer.name).toBe(CLUSTER);
    expect(d!.pool.shared).toBe(false);
    expect(poolIps(d!)).toEqual(["10.0.1.10", "10.0.1.11"]);
  });

  it("nodes no configuration takes are told as a Warning, naming them and the fix", () => {
    // Both have a nodeSelector, so a node in neither primary pool that fails both is on neither.
    const selective = (c: LoadBalancerConfiguration): LoadBalancerConfiguration => ({
      ...c,
      nodeSelector: { matchLabels: { edge: "true" } },
    });
    const lone = { name: "node-x", internalIP: "10.0.1.20" };
    const cfg = multi(NO_LIMITS, [selective(K), selective(B)]);
    const [notice, ...rest] = placementNotices(cfg, svc(1, { nodes: [...NODES, lone] }));
    expect(rest).toEqual([]);
    expect(notice).toMatchObject({ type: "Warning", reason: "NodesOnNoLoadBalancer" });
    expect(notice!.message).toContain("nodes node-x are on none of the configured load balancers");
    expect(placementNotices(cfg, svc(1))).toEqual([]);
    expect(placementNotices(config(), svc(1, { nodes: [lone] }))).toEqual([]);
  });

  it("lists at most five of them", () => {
    const selective: LoadBalancerConfiguration = { ...K, nodeSelector: { matchLabels: { edge: "true" } } };
    const many = Array.from({ length: 7 }, (_, i) => ({ name: `n${i}`, internalIP: `10.0.1.${30 + i}` }));
    const [notice] = placementNotices(multi(NO_LIMITS, [selective]), svc(1, { nodes: many }));
    expect(notice!.message).toContain("nodes n0, n1, n2, n3, n4 and 2 more are");
  });
});
