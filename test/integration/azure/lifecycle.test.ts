// A Service's whole life on the cluster's shared Standard load balancer: made, served, and removed again.
import { AZURE_WORLD, expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, readyCondition, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const gone = async (fn: () => Promise<unknown>) =>
  fn().then(
    () => false,
    (e: { code?: number }) => e.code === 404,
  );

test("a public Service gets a frontend on the cluster load balancer, a tagged static public IP, node targets on its nodePort and an allow rule", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService());
  const uid = svc.metadata!.uid!;
  const fe = `a${uid.replace(/-/g, "")}`;
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  const ip = await waitForIP(cluster, "web");

  const inv = await inventory(azure);
  expect(inv.loadBalancers).toHaveLength(1);
  const lb = inv.loadBalancers[0]!;
  expect(lb).toMatchObject({ name: cluster.namespace, sku: "Standard" });
  expect(lb.tags).toMatchObject({ "portico.io-cluster": cluster.namespace });
  expect(lb.frontends).toEqual([
    {
      name: fe,
      publicIp: `${cluster.namespace}-${fe}`,
      subnet: undefined,
      privateIp: undefined,
      allocation: "Dynamic",
    },
  ]);
  expect(inv.publicIps).toEqual([
    {
      name: `${cluster.namespace}-${fe}`,
      address: ip,
      usedBy: fe,
      fqdn: undefined,
      ipTags: [],
      tags: {
        "portico.io-cluster": cluster.namespace,
        "portico.io-service": `${cluster.namespace}/web`,
        "portico.io-service-uid": uid,
        "portico.io-resource": "publicip",
      },
    },
  ]);
  expect(lb.pools).toEqual([{ name: "portico-nodes", addresses: world.nodeIPs }]);
  expect(lb.probes).toEqual([{ name: `${fe}-TCP-80`, protocol: "Tcp", port: nodePort }]);
  expect(lb.rules).toEqual([
    {
      name: `${fe}-TCP-80`,
      protocol: "Tcp",
      frontendPort: 80,
      backendPort: nodePort,
      frontend: fe,
      pool: "portico-nodes",
      probe: `${fe}-TCP-80`,
      floatingIP: false,
      // cloud-provider-azure's default too: resets unless azure-load-balancer-disable-tcp-reset is "true".
      tcpReset: true,
    },
  ]);
  expect(inv.securityRules).toEqual([
    {
      name: `${fe}-TCP-80`,
      description: `portico:${inv.securityRules[0]!.description!.split(":")[1]}:${cluster.namespace}/web`,
      access: "Allow",
      protocol: "Tcp",
      priority: 500,
      port: String(nodePort),
      sources: ["Internet"],
      // The nodes' subnet, not each node: see backendDestinations in the provider.
      destinations: [AZURE_WORLD.subnetPrefix],
    },
  ]);
  expect(inv.securityRules[0]!.description).toMatch(/^portico:[0-9a-f]{10}:/);
  expect(await readyCondition(cluster, "web")).toMatchObject({ status: "True", reason: "Provisioned" });
  const status = (await cluster.getService("web")).status!.loadBalancer!.ingress!;
  expect(status).toEqual([{ ip, ipMode: "VIP" }]);
});

test("deleting the Service removes its rules, frontend, public IP and the then empty load balancer; a user's public IP stays", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const users = await azure.createPublicIp("users-own-ip");
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  await cluster.createService("byo", lbService(), {
    "service.beta.kubernetes.io/azure-pip-name": "users-own-ip",
  });
  expect(await waitForIP(cluster, "byo")).toBe(users.ipAddress);
  await waitForIP(cluster, "web");
  expect((await inventory(azure)).loadBalancers[0]!.frontends).toHaveLength(2);

  await azure.clearRequests();
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("web to be gone", () => gone(() => cluster.getService("web")));
  // Its public IP, shared by nobody in the observation, goes in one conditional delete, with no read of its own.
  const counts = await azure.requestCounts();
  expect(counts["DELETE publicIPAddresses"]).toBe(1);
  expect(counts["GET publicIPAddresses"]).toBeUndefined();
  let inv = await inventory(azure);
  expect(inv.loadBalancers[0]!.frontends.map((f) => f.publicIp)).toEqual(["users-own-ip"]);
  expect(inv.publicIps.map((p) => p.name)).toEqual(["users-own-ip"]);
  expect(inv.securityRules).toHaveLength(1);

  await cluster.core.deleteNamespacedService({ name: "byo", namespace: cluster.namespace });
  await waitFor("byo to be gone", () => gone(() => cluster.getService("byo")));
  inv = await inventory(azure);
  expect(inv.loadBalancers).toEqual([]);
  expect(inv.securityRules).toEqual([]);
  expect(inv.publicIps).toEqual([
    {
      name: "users-own-ip",
      address: users.ipAddress,
      tags: {},
      usedBy: undefined,
      fqdn: undefined,
      ipTags: [],
    },
  ]);
});
