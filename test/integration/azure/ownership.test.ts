// What Portico owns it finds again by name and tags, adopts after a restart and cleans up; what it does not own
// (the user's public IPs, load balancers and security rules, another cluster's) it never touches.
import { AZURE_WORLD, expect, mark, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, readyCondition, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const INTERNAL = "service.beta.kubernetes.io/azure-load-balancer-internal";
const feOf = (uid: string) => `a${uid.replace(/-/g, "")}`;
const gone = async (fn: () => Promise<unknown>) =>
  fn().then(
    () => false,
    (e: { code?: number }) => e.code === 404,
  );

test("the user's public IPs, load balancers and security rules, and another cluster's, are never touched", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const w = AZURE_WORLD;
  const pip = await azure.createPublicIp("users-ip", { owner: "me" });
  const lbBody = (tags: Record<string, string>) => ({
    location: w.location,
    sku: { name: "Standard" },
    tags,
    frontendIPConfigurations: [
      {
        name: "fe",
        subnet: { id: `${pipScope(azure)}/virtualNetworks/${w.vnetName}/subnets/${w.subnetName}` },
      },
    ],
  });
  await azure.network.loadBalancers.createOrUpdate(w.resourceGroup, "users-lb", lbBody({}), {
    updateIntervalInMs: 20,
  });
  await azure.network.loadBalancers.createOrUpdate(
    w.resourceGroup,
    "other-cluster",
    lbBody({
      "portico.io-cluster": "another-cluster",
      "portico.io-frontend-a0123456789abcdef0123456789abcdef": "a/b",
    }),
    { updateIntervalInMs: 20 },
  );
  const nsg = await azure.network.networkSecurityGroups.get(w.resourceGroup, w.securityGroupName);
  await azure.network.networkSecurityGroups.createOrUpdate(
    w.resourceGroup,
    w.securityGroupName,
    {
      ...nsg,
      securityRules: [500, 501].map((priority) => ({
        name: `users-rule-${priority}`,
        description: "mine",
        protocol: "Tcp",
        access: "Allow",
        direction: "Inbound",
        priority,
        sourcePortRange: "*",
        destinationPortRange: "22",
        sourceAddressPrefix: "10.0.0.0/8",
        destinationAddressPrefix: "*",
      })),
    },
    { updateIntervalInMs: 20 },
  );
  const before = await inventory(azure);

  const controller = await startPortico(cluster, { provider: "azure", orphanCollectionPeriodMs: 200 });
  await cluster.createService("web", lbService());
  await cluster.createService("internal", lbService(), { [INTERNAL]: "true" });
  await waitForIP(cluster, "web");
  await waitForIP(cluster, "internal");
  const during = await inventory(azure);
  const portico = during.securityRules.filter((r) => !r.name.startsWith("users-rule"));
  expect(portico.map((r) => r.priority).sort()).toEqual([502, 503]);

  for (const name of ["web", "internal"]) {
    await cluster.core.deleteNamespacedService({ name, namespace: cluster.namespace });
    await waitFor(`${name} to be gone`, () => gone(() => cluster.getService(name)));
  }
  // Orphan collection has had several whole rounds to (wrongly) act.
  const collected = await mark(controller.metrics.orphanCollections);
  await collected("three more orphan collections", 3);
  expect(controller.isLeader()).toBe(true);
  expect(await inventory(azure)).toEqual(before);
  expect((await azure.network.publicIPAddresses.get(w.resourceGroup, "users-ip")).ipAddress).toBe(
    pip.ipAddress,
  );
});

test("a load balancer with the cluster load balancer's name that Portico did not make is not adopted", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const pip = await azure.createPublicIp("users-ip");
  await azure.network.loadBalancers.createOrUpdate(
    AZURE_WORLD.resourceGroup,
    cluster.namespace,
    {
      location: AZURE_WORLD.location,
      sku: { name: "Standard" },
      frontendIPConfigurations: [{ name: "fe", publicIPAddress: { id: pip.id } }],
    },
    { updateIntervalInMs: 20 },
  );
  const before = await inventory(azure);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  const condition = await waitFor("a failure condition", async () => {
    const c = await readyCondition(cluster, "web");
    return c?.status === "False" ? c : undefined;
  });
  expect(condition.reason).toBe("LoadBalancerNameTaken");
  // The plan refuses before any write: no public IP, no rule, and the user's load balancer as it was.
  expect(await inventory(azure)).toEqual(before);
});

test("a public IP asked for by address is the user's: used as it is, and left when the Service goes", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const pip = await azure.createPublicIp("reserved", { team: "web" });
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService(), {
    "service.beta.kubernetes.io/azure-load-balancer-ipv4": pip.ipAddress!,
  });
  expect(await waitForIP(cluster, "web")).toBe(pip.ipAddress);
  let inv = await inventory(azure);
  expect(inv.publicIps).toEqual([
    {
      name: "reserved",
      address: pip.ipAddress,
      tags: { team: "web" },
      usedBy: inv.loadBalancers[0]!.frontends[0]!.name,
      fqdn: undefined,
      ipTags: [],
    },
  ]);
  // The load balancer records the Service, as no Portico public IP does.
  expect(Object.values(inv.loadBalancers[0]!.tags)).toContain(`${cluster.namespace}/web`);

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("web to be gone", () => gone(() => cluster.getService("web")));
  inv = await inventory(azure);
  expect(inv.loadBalancers).toEqual([]);
  expect(inv.publicIps).toEqual([
    {
      name: "reserved",
      address: pip.ipAddress,
      tags: { team: "web" },
      usedBy: undefined,
      fqdn: undefined,
      ipTags: [],
    },
  ]);
});

test("a controller restarted mid-way adopts what it made: no duplicates, no orphans, nothing lost", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 2);
  await azure.configure({ operationDurationMs: 150 });
  const first = await startPortico(cluster, { provider: "azure" });
  const names = Array.from({ length: 8 }, (_, i) => `svc-${i}`);
  await Promise.all(
    names.map((n, i) => cluster.createService(n, lbService(), i % 2 ? { [INTERNAL]: "true" } : {})),
  );
  // Stop as soon as the first frontend exists: the others are somewhere between nothing and done.
  await waitFor(
    "the first frontend",
    async () => (await inventory(azure)).loadBalancers.some((lb) => lb.frontends.length),
    {
      intervalMs: 20,
    },
  );
  await first.stop();
  // While no controller runs, two Services are deleted for good (their finalizers removed by hand).
  for (const gone of ["svc-6", "svc-7"]) {
    await patchService(cluster, gone, { metadata: { finalizers: null } });
    await cluster.core.deleteNamespacedService({ name: gone, namespace: cluster.namespace });
  }
  await startPortico(cluster, { provider: "azure", orphanCollectionPeriodMs: 300 });
  const live = names.slice(0, 6);
  for (const n of live) await waitForIP(cluster, n);
  const uids = await Promise.all(live.map(async (n) => feOf((await cluster.getService(n)).metadata!.uid!)));
  await waitFor("the deleted Services' parts to be collected", async () => {
    const inv = await inventory(azure);
    return (
      inv.loadBalancers.flatMap((lb) => lb.frontends).length === 6 &&
      inv.publicIps.length === 3 &&
      inv.securityRules.length === 6
    );
  });
  const inv = await inventory(azure);
  expect(inv.loadBalancers.flatMap((lb) => lb.frontends.map((f) => f.name)).sort()).toEqual([...uids].sort());
  expect(inv.loadBalancers.flatMap((lb) => lb.rules.map((r) => r.frontend)).sort()).toEqual([...uids].sort());
  expect(inv.loadBalancers.flatMap((lb) => lb.probes)).toHaveLength(6);
  expect(inv.publicIps.map((p) => p.tags["portico.io-service"]).sort()).toEqual(
    ["svc-0", "svc-2", "svc-4"].map((n) => `${cluster.namespace}/${n}`),
  );
  expect(inv.securityRules.map((r) => r.name.split("-")[0]).sort()).toEqual([...uids].sort());
  for (const lb of inv.loadBalancers)
    expect(lb.pools).toEqual([{ name: "portico-nodes", addresses: world.nodeIPs }]);
});

function pipScope(azure: { subscriptionId: string }): string {
  return `/subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Network`;
}
