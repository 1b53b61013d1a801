// Several Standard load balancers, configured as cloud-provider-azure's multipleStandardLoadBalancerConfigurations:
// Services placed by namespace and Service label selectors and by the azure-load-balancer-configurations
// annotation, each load balancer's node pool holding its primary scale set's nodes, Azure's limits checked per
// load balancer, Services staying where they are unless asked to move, porticoctl status naming the load
// balancer, and deletion emptying each. Checked in ARM's own state, with the controller running as users run it.
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Service } from "@kubernetes/client-node";
import { AZURE_WORLD, expect, expectRefused, test, waitFor, type TestCluster } from "../../harness/index.ts";
import type { TestAzure } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { LoadBalancerConfiguration } from "../../../providers/azure/placement/lbConfigurations.ts";
import { DOCUMENTED_LIMITS } from "../../emulators/azure/index.ts";
import { lbService, patchService, readyCondition, serviceEvents, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";
import { porticoctlStatus } from "./porticoctl.ts";
import { AzureProvider } from "../../../providers/azure/provider.ts";
import type { LoadBalancerIntent } from "../../../providers/provider.ts";

const CONFIGURATIONS = "service.beta.kubernetes.io/azure-load-balancer-configurations";

/** Three nodes, each in a scale set of its own (pool-a, pool-b, pool-c), as AKS registers them. */
async function scaleSetNodes(cluster: TestCluster, azure: TestAzure): Promise<Record<string, string>> {
  const ips: Record<string, string> = {};
  for (const [i, pool] of ["pool-a", "pool-b", "pool-c"].entries()) {
    const ip = `10.0.1.${10 + i}`;
    await cluster.createNode(`node-${i}`, {
      internalIP: ip,
      providerID: `azure:///subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute/virtualMachineScaleSets/${pool}/virtualMachines/${i}`,
    });
    ips[pool] = ip;
  }
  return ips;
}

async function createService(
  cluster: TestCluster,
  name: string,
  opts: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    port?: number;
    /** More ports after the first, each with a rule of its own. */
    more?: number;
  } = {},
): Promise<V1Service> {
  const first = opts.port ?? 80;
  const ports = Array.from({ length: 1 + (opts.more ?? 0) }, (_, i) => ({
    name: `p${first + i}`,
    port: first + i,
    targetPort: 8080 + i,
    protocol: "TCP",
  }));
  return cluster.core.createNamespacedService({
    namespace: cluster.namespace,
    body: {
      metadata: { name, labels: opts.labels ?? {}, annotations: opts.annotations ?? {} },
      spec: lbService(ports),
    },
  });
}

const frontendOf = (svc: V1Service) => `a${svc.metadata!.uid!.replace(/-/g, "")}`;

/** Which load balancer holds each frontend, and each load balancer's node pool, as ARM has them. */
async function layout(azure: TestAzure) {
  const inv = await inventory(azure);
  return {
    holder: (fe: string) => inv.loadBalancers.find((lb) => lb.frontends.some((f) => f.name === fe))?.name,
    nodePool: (lb: string) =>
      inv.loadBalancers.find((l) => l.name === lb)?.pools.find((p) => p.name === "portico-nodes")?.addresses,
    loadBalancers: inv.loadBalancers.map((lb) => lb.name).sort(),
    inv,
  };
}

function start(cluster: TestCluster, azure: TestAzure, configs: LoadBalancerConfiguration[], limits = {}) {
  return startPortico(cluster, {
    provider: "azure",
    settings: azure.config({ multipleStandardLoadBalancerConfigurations: configs, limits }),
  });
}

test("Services go on the load balancer their labels select or their annotation names; each load balancer's pool holds its own scale set's nodes; status names it; deletion empties each", async ({
  cluster,
  azure,
}) => {
  const ns = cluster.namespace;
  const ips = await scaleSetNodes(cluster, azure);
  const configs: LoadBalancerConfiguration[] = [
    { name: ns, primaryVMSet: "pool-a" },
    { name: `${ns}-edge`, primaryVMSet: "pool-b", serviceLabelSelector: { matchLabels: { tier: "edge" } } },
    { name: `${ns}-closed`, primaryVMSet: "pool-c", allowServicePlacement: false },
  ];
  await start(cluster, azure, configs);
  const plain = await createService(cluster, "plain");
  const edge = await createService(cluster, "edge", { labels: { tier: "edge" }, port: 81 });
  const named = await createService(cluster, "named", {
    annotations: { [CONFIGURATIONS]: `${ns}-closed` },
    port: 82,
  });
  for (const name of ["plain", "edge", "named"]) await waitForIP(cluster, name);

  const placed = await layout(azure);
  expect(placed.holder(frontendOf(plain))).toBe(ns);
  expect(placed.holder(frontendOf(edge))).toBe(`${ns}-edge`);
  expect(placed.holder(frontendOf(named))).toBe(`${ns}-closed`);
  expect(placed.nodePool(ns)).toEqual([ips["pool-a"]]);
  expect(placed.nodePool(`${ns}-edge`)).toEqual([ips["pool-b"]]);
  expect(placed.nodePool(`${ns}-closed`)).toEqual([ips["pool-c"]]);

  const status = await porticoctlStatus(azure, `${ns}/edge`, await configFile(cluster, azure, configs));
  expect(status).toContain(`load balancer ${ns}-edge (public, Standard)`);
  expect(status).toContain(`configuration ${ns}-edge of 3 (multipleStandardLoadBalancerConfigurations)`);

  for (const name of ["plain", "edge", "named"])
    await cluster.core.deleteNamespacedService({ name, namespace: ns });
  const empty = await waitFor("every load balancer and public IP to go", async () => {
    const inv = await inventory(azure);
    return inv.loadBalancers.length === 0 && inv.publicIps.length === 0 ? inv : undefined;
  });
  expect(empty.securityRules).toEqual([]);
});

// The controller watches Namespaces only on bare metal, so on Azure its intents carry no namespace labels yet;
// the provider is driven here with the intent the controller would build once it passes them.
test("a namespace selector places the namespace's Services on its load balancer, through the provider; delete empties each", async ({
  cluster,
  azure,
}) => {
  const ns = cluster.namespace;
  const provider = new AzureProvider({
    clusterName: ns,
    ...azure.config({
      multipleStandardLoadBalancerConfigurations: [
        { name: ns, primaryVMSet: "pool-a" },
        {
          name: `${ns}-team`,
          primaryVMSet: "pool-b",
          serviceNamespaceSelector: { matchLabels: { team: "blue" } },
        },
      ],
    }),
  });
  const blue = await createService(cluster, "blue");
  const other = await createService(cluster, "other", { port: 81 });
  await provider.ensure(intentOf(blue, { team: "blue" }));
  await provider.ensure(intentOf(other, { team: "red" }));
  const placed = await layout(azure);
  expect(placed.holder(frontendOf(blue))).toBe(`${ns}-team`);
  expect(placed.holder(frontendOf(other))).toBe(ns);
  expect(placed.nodePool(`${ns}-team`)).toEqual(["10.0.1.11"]);
  expect(placed.nodePool(ns)).toEqual(["10.0.1.10"]);

  // Ensured again, each changes nothing: a no-change reconcile writes nothing.
  await azure.clearRequests();
  await provider.ensure(intentOf(blue, { team: "blue" }));
  await provider.ensure(intentOf(other, { team: "red" }));
  const writes = Object.keys(await azure.requestCounts()).filter(
    (op) => !op.startsWith("GET") && !op.endsWith("token"),
  );
  expect(writes).toEqual([]);

  await provider.delete(intentOf(blue, {}).service);
  await provider.delete(intentOf(other, {}).service);
  const inv = await inventory(azure);
  expect(inv.loadBalancers).toEqual([]);
  expect(inv.publicIps).toEqual([]);
});

test("Azure's limits are checked per load balancer: a Service goes where there is room, and one that fits on none is refused with nothing made", async ({
  cluster,
  azure,
}) => {
  const ns = cluster.namespace;
  await scaleSetNodes(cluster, azure);
  // ARM holds the same limit, so a refusal of Portico's own is what keeps the last Service from being half-made.
  await azure.configure({ limits: { ...DOCUMENTED_LIMITS, frontendIPConfigurationsPerLoadBalancer: 2 } });
  const configs = [
    { name: ns, primaryVMSet: "pool-a" },
    { name: `${ns}-b`, primaryVMSet: "pool-b" },
  ];
  await start(cluster, azure, configs, { frontendIPConfigurationsPerLoadBalancer: 2 });
  // a: three rules on the first; b and c: one rule each on the second, which has fewer rules.
  const served: Record<string, string> = {};
  const made: Record<string, V1Service> = {};
  for (const [name, port, more] of [
    ["a", 80, 2],
    ["b", 90, 0],
    ["c", 91, 0],
    // The second still has fewer rules (2 against 3) but no room for a third frontend: d goes on the first.
    ["d", 92, 0],
  ] as const) {
    made[name] = await createService(cluster, name, { port, more });
    served[name] = await waitForIP(cluster, name);
  }
  const e = await createService(cluster, "e", { port: 93 });

  await expectRefused(cluster, "e", {
    reason: "NoLoadBalancerWithRoom",
    mentions: [
      // Placed by the configurations' selectors: e names no load balancer itself.
      "multipleStandardLoadBalancerConfigurations (controller Azure config): the Service fits on none",
      `${ns}-b: load balancer ${ns}-b would have 3 frontends, one per Service, and Azure allows 2`,
      `${ns}: load balancer ${ns} would have 3 frontends, one per Service, and Azure allows 2`,
      "add a load balancer to multipleStandardLoadBalancerConfigurations",
    ],
  });
  const after = await layout(azure);
  expect(
    Object.fromEntries(Object.entries(made).map(([name, svc]) => [name, after.holder(frontendOf(svc))])),
  ).toEqual({
    a: ns,
    b: `${ns}-b`,
    c: `${ns}-b`,
    d: ns,
  });
  expect(after.holder(frontendOf(e))).toBeUndefined();
  expect(after.inv.publicIps.filter((p) => p.tags["portico.io-service-uid"] === e.metadata!.uid)).toEqual([]);
  expect(after.inv.securityRules.filter((r) => r.name.startsWith(frontendOf(e)))).toEqual([]);
  for (const [name, ip] of Object.entries(served)) {
    expect(await readyCondition(cluster, name)).toMatchObject({ status: "True" });
    expect((await cluster.getService(name)).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ip);
  }
});

test("a Service stays on its load balancer when another empties, and moves, keeping its address, when its annotation asks", async ({
  cluster,
  azure,
}) => {
  const ns = cluster.namespace;
  await scaleSetNodes(cluster, azure);
  await start(cluster, azure, [
    { name: ns, primaryVMSet: "pool-a" },
    { name: `${ns}-b`, primaryVMSet: "pool-b" },
  ]);
  await createService(cluster, "a");
  await waitForIP(cluster, "a");
  await createService(cluster, "b", { port: 81 });
  await waitForIP(cluster, "b");
  // One rule on each: the tie goes to the first configured.
  const c = await createService(cluster, "c", { port: 82 });
  const ipC = await waitForIP(cluster, "c");
  expect((await layout(azure)).holder(frontendOf(c))).toBe(ns);

  await cluster.core.deleteNamespacedService({ name: "b", namespace: ns });
  await waitFor("the emptied load balancer to go", async () =>
    !(await layout(azure)).loadBalancers.includes(`${ns}-b`) ? true : undefined,
  );
  // A change to c is reconciled with the other load balancer gone (fewer rules than c's own): c stays.
  await patchService(cluster, "c", {
    spec: { ports: [{ name: "http", port: 83, targetPort: 8080, protocol: "TCP" }] },
  });
  const stayed = await waitFor("c's rule on port 83", async () => {
    const l = await layout(azure);
    const rule = l.inv.loadBalancers.flatMap((lb) => lb.rules).find((r) => r.frontend === frontendOf(c));
    return rule?.frontendPort === 83 ? l : undefined;
  });
  expect(stayed.holder(frontendOf(c))).toBe(ns);
  expect(stayed.loadBalancers).toEqual([ns]);

  // Asked to move: it goes, with its own public IP, so its address stays the same.
  await patchService(cluster, "c", { metadata: { annotations: { [CONFIGURATIONS]: `${ns}-b` } } });
  const moved = await waitFor("c on the other load balancer", async () => {
    const l = await layout(azure);
    return l.holder(frontendOf(c)) === `${ns}-b` ? l : undefined;
  });
  expect(moved.loadBalancers).toEqual([ns, `${ns}-b`]);
  const frontend = moved.inv.loadBalancers
    .find((lb) => lb.name === `${ns}-b`)!
    .frontends.find((f) => f.name === frontendOf(c))!;
  const own = moved.inv.publicIps.find((p) => p.tags["portico.io-service-uid"] === c.metadata!.uid);
  expect(frontend.publicIp).toBe(own?.name);
  expect(own?.address).toBe(ipC);
  expect((await cluster.getService("c")).status?.loadBalancer?.ingress?.[0]?.ip).toBe(ipC);
});

test("nodes that no configured load balancer takes are told as a Warning on the Service, and get no traffic", async ({
  cluster,
  azure,
}) => {
  const ns = cluster.namespace;
  const ips = await scaleSetNodes(cluster, azure);
  // A standalone VM, in no scale set, and node-2, in pool-c, which is no one's primary pool: every
  // configuration has a nodeSelector they fail.
  await cluster.createNode("lone", {
    internalIP: "10.0.1.20",
    providerID: `azure:///subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute/virtualMachines/lone`,
  });
  const edgeOnly = { matchLabels: { "example.com/edge": "true" } };
  await start(cluster, azure, [
    { name: ns, primaryVMSet: "pool-a", nodeSelector: edgeOnly },
    { name: `${ns}-b`, primaryVMSet: "pool-b", nodeSelector: edgeOnly },
  ]);
  const svc = await createService(cluster, "web");
  await waitForIP(cluster, "web");
  const events = await waitFor("the Warning about the node", async () => {
    const list = await serviceEvents(cluster, "web");
    return list.some((e) => e.reason === "NodesOnNoLoadBalancer") ? list : undefined;
  });
  const warning = events.find((e) => e.reason === "NodesOnNoLoadBalancer");
  expect(warning?.type).toBe("Warning");
  expect(warning?.message).toContain(
    `nodes ${ns}-lone, ${ns}-node-2 are on none of the configured load balancers`,
  );
  const placed = await layout(azure);
  expect(placed.holder(frontendOf(svc))).toBe(ns);
  expect(placed.nodePool(ns)).toEqual([ips["pool-a"]]);
});

/** The controller's azure.json for porticoctl, as an operator hands it over. */
async function configFile(cluster: TestCluster, azure: TestAzure, configs: LoadBalancerConfiguration[]) {
  const file = join(tmpdir(), `portico-multi-lb-${cluster.namespace}.json`);
  await writeFile(
    file,
    JSON.stringify(azure.config({ multipleStandardLoadBalancerConfigurations: configs })),
  );
  cluster.defer(() => rm(file, { force: true }));
  return file;
}

/** The intent the controller builds for a one-port Service on two scale-set nodes, with its namespace's labels. */
function intentOf(svc: V1Service, namespaceLabels: Record<string, string>): LoadBalancerIntent {
  const vmss = (pool: string, i: number) =>
    `azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachineScaleSets/${pool}/virtualMachines/${i}`;
  return {
    service: { namespace: svc.metadata!.namespace!, name: svc.metadata!.name!, uid: svc.metadata!.uid! },
    loadBalancerClass: svc.spec!.loadBalancerClass!,
    annotations: {},
    ports: svc.spec!.ports!.map((p) => ({
      name: p.name ?? "",
      protocol: "TCP",
      port: p.port,
      nodePort: p.nodePort!,
    })),
    externalTrafficPolicy: "Cluster",
    allocateNodePorts: true,
    nodes: [
      { name: "node-0", internalIP: "10.0.1.10", providerID: vmss("pool-a", 0) },
      { name: "node-1", internalIP: "10.0.1.11", providerID: vmss("pool-b", 1) },
    ],
    endpoints: [],
    drainingEndpoints: [],
    sourceRanges: [],
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    serviceLabels: svc.metadata!.labels ?? {},
    namespaceLabels,
  };
}
