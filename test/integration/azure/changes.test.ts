// A Service changes; its parts of the shared load balancer follow in place, and nothing of another Service moves.
import { AZURE_WORLD, expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { addNode, azureWorld, lbService, patchService, podIP, serviceEvents, waitForIP } from "./fixtures.ts";
import { inventory, type Inventory } from "./inventory.ts";

const TARGET_TYPE = "portico.io/target-type";
const feOf = (uid: string) => `a${uid.replace(/-/g, "")}`;
const rulesOf = (inv: Inventory, fe: string) =>
  inv.loadBalancers.flatMap((lb) => lb.rules).filter((r) => r.frontend === fe);
const probesOf = (inv: Inventory, fe: string) =>
  inv.loadBalancers.flatMap((lb) => lb.probes).filter((p) => p.name.startsWith(fe));
const poolNamed = (inv: Inventory, name: string) =>
  inv.loadBalancers.flatMap((lb) => lb.pools).find((p) => p.name === name);

test("ports added and removed become rules, probes and allow rules added and removed, on the same address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const other = await cluster.createService("other", lbService([{ name: "dns", port: 53, protocol: "UDP" }]));
  const svc = await cluster.createService("web", lbService());
  const fe = feOf(svc.metadata!.uid!);
  const ip = await waitForIP(cluster, "web");
  await waitForIP(cluster, "other");
  const otherBefore = rulesOf(await inventory(azure), feOf(other.metadata!.uid!));

  const changed = await patchService(cluster, "web", {
    spec: {
      ports: [
        { name: "http", port: 80, targetPort: 8080 },
        { name: "https", port: 443, targetPort: 8443 },
      ],
    },
  });
  const httpsNodePort = changed.spec!.ports!.find((p) => p.port === 443)!.nodePort!;
  await waitFor("a rule for 443", async () => rulesOf(await inventory(azure), fe).length === 2);
  let inv = await inventory(azure);
  expect(
    rulesOf(inv, fe)
      .map((r) => [r.name, r.frontendPort])
      .sort(),
  ).toEqual([
    [`${fe}-TCP-443`, 443],
    [`${fe}-TCP-80`, 80],
  ]);
  expect(probesOf(inv, fe).find((p) => p.name === `${fe}-TCP-443`)).toMatchObject({
    protocol: "Tcp",
    port: httpsNodePort,
  });
  await waitFor("an allow rule for 443", async () =>
    (await inventory(azure)).securityRules.some((r) => r.port === String(httpsNodePort)),
  );

  await patchService(cluster, "web", { spec: { ports: [{ name: "https", port: 443, targetPort: 8443 }] } });
  await waitFor("only the 443 rule", async () => rulesOf(await inventory(azure), fe).length === 1);
  await waitFor(
    "only the 443 allow rule",
    async () => (await inventory(azure)).securityRules.filter((r) => r.name.startsWith(fe)).length === 1,
  );
  inv = await inventory(azure);
  expect(rulesOf(inv, fe).map((r) => r.name)).toEqual([`${fe}-TCP-443`]);
  expect(probesOf(inv, fe).map((p) => p.name)).toEqual([`${fe}-TCP-443`]);
  expect(await waitForIP(cluster, "web")).toBe(ip);
  expect(rulesOf(inv, feOf(other.metadata!.uid!))).toEqual(otherBefore);
});

test("instance to ip targets moves the rules to a pool of pod addresses, and back; draining pods stay without new connections", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService());
  const fe = feOf(svc.metadata!.uid!);
  await waitForIP(cluster, "web");
  const slice = await cluster.createEndpointSlice(
    "web",
    [
      { ip: podIP(1), nodeName: world.nodes[0] },
      { ip: podIP(2), nodeName: world.nodes[1] },
      { ip: podIP(3), nodeName: world.nodes[1], ready: false, serving: true, terminating: true },
    ],
    [{ name: "http", port: 8080 }],
  );
  await patchService(cluster, "web", { metadata: { annotations: { [TARGET_TYPE]: "ip" } } });
  await waitFor(
    "rules on the Service's own pod pool",
    async () => rulesOf(await inventory(azure), fe)[0]?.pool === fe,
  );
  let inv = await inventory(azure);
  expect(poolNamed(inv, fe)!.addresses).toEqual([podIP(1), podIP(2), `${podIP(3)} (draining)`]);
  expect(rulesOf(inv, fe)).toMatchObject([{ backendPort: 8080, pool: fe }]);
  expect(probesOf(inv, fe)).toEqual([{ name: `${fe}-TCP-80`, protocol: "Tcp", port: 8080 }]);
  // No rule uses the node pool any more, so it went with the change.
  expect(poolNamed(inv, "portico-nodes")).toBeUndefined();
  await waitFor("allow rules to the pods' subnet on their port", async () =>
    (await inventory(azure)).securityRules.some(
      (r) => r.destinations.join() === AZURE_WORLD.podSubnetPrefix && r.port === "8080",
    ),
  );

  await cluster.discovery.deleteNamespacedEndpointSlice({
    name: slice.metadata!.name!,
    namespace: cluster.namespace,
  });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: podIP(4), nodeName: world.nodes[0] }],
    [{ name: "http", port: 9090 }],
  );
  await waitFor("the new pod on its new port", async () => {
    const i = await inventory(azure);
    return poolNamed(i, fe)?.addresses.join() === podIP(4) && rulesOf(i, fe)[0]?.backendPort === 9090;
  });

  await patchService(cluster, "web", { metadata: { annotations: { [TARGET_TYPE]: "instance" } } });
  await waitFor(
    "rules back on the node pool",
    async () => rulesOf(await inventory(azure), fe)[0]?.pool === "portico-nodes",
  );
  inv = await inventory(azure);
  expect(poolNamed(inv, fe)).toBeUndefined();
  expect(poolNamed(inv, "portico-nodes")!.addresses).toEqual(world.nodeIPs);
});

test("externalTrafficPolicy Local probes kube-proxy's healthCheckNodePort; Cluster probes the node port, or kube-proxy when asked", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService(undefined, { externalTrafficPolicy: "Local" }));
  const fe = feOf(svc.metadata!.uid!);
  await waitForIP(cluster, "web");
  expect(probesOf(await inventory(azure), fe)).toEqual([
    { name: `${fe}-TCP-80`, protocol: "Http", port: svc.spec!.healthCheckNodePort, path: "/healthz" },
  ]);

  await patchService(cluster, "web", { spec: { externalTrafficPolicy: "Cluster" } });
  await waitFor("a TCP probe", async () => probesOf(await inventory(azure), fe)[0]?.protocol === "Tcp");
  expect(probesOf(await inventory(azure), fe)).toEqual([
    { name: `${fe}-TCP-80`, protocol: "Tcp", port: svc.spec!.ports![0]!.nodePort },
  ]);

  await patchService(cluster, "web", {
    metadata: { annotations: { "portico.io/health-check-kube-proxy": "true" } },
  });
  await waitFor("kube-proxy's probe", async () => probesOf(await inventory(azure), fe)[0]?.port === 10256);
  expect(probesOf(await inventory(azure), fe)[0]).toMatchObject({ protocol: "Http", path: "/healthz" });

  await patchService(cluster, "web", {
    metadata: {
      annotations: {
        "service.beta.kubernetes.io/azure-load-balancer-health-probe-protocol": "Https",
        "service.beta.kubernetes.io/azure-load-balancer-health-probe-request-path": "/ready",
      },
    },
  });
  await waitFor(
    "the annotated probe",
    async () => probesOf(await inventory(azure), fe)[0]?.protocol === "Https",
  );
  expect(probesOf(await inventory(azure), fe)[0]).toMatchObject({ port: 10256, path: "/ready" });
  expect(await serviceEvents(cluster, "web")).toContainEqual({
    type: "Normal",
    reason: "UpdatedLoadBalancer",
    message: `update load balancer ${cluster.namespace}: ~probe ${fe}-TCP-80`,
  });
});

test("nodes added, excluded, not ready, doomed, cordoned or deleted join and leave the node pool", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  await waitForIP(cluster, "web");
  const pool = async () => poolNamed(await inventory(azure), "portico-nodes")?.addresses ?? [];
  const extra = [];
  for (let i = 1; i <= 5; i++) extra.push(await addNode(cluster, azure, i));
  await waitFor("all six nodes in the pool", async () => (await pool()).length === 6);
  expect(await pool()).toEqual([...world.nodeIPs, ...extra.map((n) => n.ip)].sort());
  // The allow rule names the nodes' subnet, so nodes joining it need no security group write.
  expect((await inventory(azure)).securityRules[0]?.destinations).toEqual([AZURE_WORLD.subnetPrefix]);

  await cluster.core.patchNode(
    {
      name: extra[0]!.name,
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } } },
    },
    mergePatch,
  );
  await cluster.setNodeStatus(extra[1]!.name, { ready: false });
  await cluster.core.patchNode(
    {
      name: extra[2]!.name,
      body: {
        spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule", value: "1" }] },
      },
    },
    mergePatch,
  );
  await cluster.core.deleteNode({ name: extra[3]!.name });
  // Cordoned, as `kubectl drain` does before it evicts the node's pods.
  await cluster.core.patchNode({ name: extra[4]!.name, body: { spec: { unschedulable: true } } }, mergePatch);
  await waitFor("only the first node in the pool", async () => (await pool()).length === 1);
  expect(await pool()).toEqual(world.nodeIPs);
  expect((await inventory(azure)).securityRules[0]?.destinations).toEqual([AZURE_WORLD.subnetPrefix]);
});

test("floating IP sends traffic to the Service port on the frontend's own address, and the allow rule follows", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService());
  const fe = feOf(svc.metadata!.uid!);
  const ip = await waitForIP(cluster, "web");
  await patchService(cluster, "web", { metadata: { annotations: { "portico.io/floating-ip": "true" } } });
  await waitFor(
    "a floating IP rule",
    async () => rulesOf(await inventory(azure), fe)[0]?.floatingIP === true,
  );
  expect(rulesOf(await inventory(azure), fe)[0]).toMatchObject({ frontendPort: 80, backendPort: 80 });
  await waitFor(
    "an allow rule to the frontend",
    async () => (await inventory(azure)).securityRules[0]?.destinations.join() === ip,
  );
  expect((await inventory(azure)).securityRules[0]!.port).toBe("80");
  // The probe still asks the node on its node port: nothing on the node answers on the frontend address.
  expect(probesOf(await inventory(azure), fe)[0]).toMatchObject({ port: svc.spec!.ports![0]!.nodePort });
});

test("sessionAffinity ClientIP makes the Service's rules distribute by source IP; None restores the default", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService(undefined, { sessionAffinity: "ClientIP" }));
  const other = await cluster.createService("other", lbService([{ name: "dns", port: 53, protocol: "UDP" }]));
  await waitForIP(cluster, "web");
  await waitForIP(cluster, "other");
  const distribution = async (uid: string) => {
    const rules = [];
    for await (const lb of azure.network.loadBalancers.list(azure.resourceGroup))
      rules.push(...(lb.loadBalancingRules ?? []).filter((r) => r.name!.startsWith(feOf(uid))));
    return rules.map((r) => r.loadDistribution);
  };
  expect(await distribution(svc.metadata!.uid!)).toEqual(["SourceIP"]);
  expect(await distribution(other.metadata!.uid!)).toEqual(["Default"]);

  await patchService(cluster, "web", { spec: { sessionAffinity: "None" } });
  await waitFor(
    "the default distribution again",
    async () => (await distribution(svc.metadata!.uid!)).join() === "Default",
  );
});
