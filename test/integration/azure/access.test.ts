// Who may reach a Service: loadBalancerSourceRanges and allowed service tags become Portico's rules in the
// cluster's network security group, changed in place and removed with the Service; and the public IP a Service
// uses can change between the user's and Portico's without the user's being touched.
import { AZURE_WORLD, expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const TAGS = "service.beta.kubernetes.io/azure-allowed-service-tags";
const PIP_NAME = "service.beta.kubernetes.io/azure-pip-name";

test("source ranges and service tags become allow rules to the Service's backends, updated in place and removed", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService(
    "web",
    lbService(undefined, { loadBalancerSourceRanges: ["203.0.113.0/24"] }),
    {
      [TAGS]: "AzureFrontDoor.Backend",
    },
  );
  const fe = `a${svc.metadata!.uid!.replace(/-/g, "")}`;
  const nodePort = String(svc.spec!.ports![0]!.nodePort);
  await waitForIP(cluster, "web");
  let rules = (await inventory(azure)).securityRules;
  expect(
    rules.map(({ name, sources, destinations, port }) => ({ name, sources, destinations, port })),
  ).toEqual([
    {
      name: `${fe}-TCP-80`,
      sources: ["203.0.113.0/24"],
      destinations: [AZURE_WORLD.subnetPrefix],
      port: nodePort,
    },
    {
      name: `${fe}-TCP-80-AzureFrontDoor.Backend`,
      sources: ["AzureFrontDoor.Backend"],
      destinations: [AZURE_WORLD.subnetPrefix],
      port: nodePort,
    },
  ]);
  const priorities = rules.map((r) => r.priority);

  await patchService(cluster, "web", {
    spec: { loadBalancerSourceRanges: ["198.51.100.0/24", "203.0.113.0/24"] },
  });
  await waitFor(
    "the wider range",
    async () => (await inventory(azure)).securityRules[0]?.sources.length === 2,
  );
  rules = (await inventory(azure)).securityRules;
  expect(rules[0]!.sources).toEqual(["198.51.100.0/24", "203.0.113.0/24"]);
  expect(rules.map((r) => r.priority)).toEqual(priorities);

  await patchService(cluster, "web", {
    spec: { loadBalancerSourceRanges: null },
    metadata: { annotations: { [TAGS]: null } },
  });
  await waitFor("everyone allowed", async () => (await inventory(azure)).securityRules.length === 1);
  expect((await inventory(azure)).securityRules[0]).toMatchObject({
    name: `${fe}-TCP-80`,
    sources: ["Internet"],
  });

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("no rules", async () => (await inventory(azure)).securityRules.length === 0);
});

test("a Service moves from Portico's public IP to the user's and back; the user's is never changed or deleted", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const users = await azure.createPublicIp("users-ip", { team: "web" });
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  await waitForIP(cluster, "web");

  await patchService(cluster, "web", { metadata: { annotations: { [PIP_NAME]: "users-ip" } } });
  await waitFor(
    "the user's address",
    async () => (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.ip === users.ipAddress,
  );
  await waitFor("Portico's public IP to go", async () => (await inventory(azure)).publicIps.length === 1);
  expect((await inventory(azure)).publicIps[0]).toMatchObject({ name: "users-ip", tags: { team: "web" } });

  await patchService(cluster, "web", { metadata: { annotations: { [PIP_NAME]: null } } });
  await waitFor("a Portico address again", async () => {
    const ip = (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.ip;
    return ip && ip !== users.ipAddress ? ip : undefined;
  });
  const inv = await inventory(azure);
  expect(inv.publicIps.find((p) => p.name === "users-ip")).toEqual({
    name: "users-ip",
    address: users.ipAddress,
    tags: { team: "web" },
    usedBy: undefined,
    fqdn: undefined,
    ipTags: [],
  });
  expect(inv.publicIps).toHaveLength(2);
});

test("with one load balancer per Service, each Service gets its own, and loses it with the Service", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, {
    provider: "azure",
    settings: azure.config({ loadBalancerPerService: true }),
  });
  const a = await cluster.createService("a", lbService());
  const b = await cluster.createService("b", lbService(), {
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
  });
  await waitForIP(cluster, "a");
  await waitForIP(cluster, "b");
  const feA = `a${a.metadata!.uid!.replace(/-/g, "")}`;
  const feB = `a${b.metadata!.uid!.replace(/-/g, "")}`;
  let inv = await inventory(azure);
  // `<cluster>-<frontend>[-internal]`, the cluster part shortened to keep within ARM's 80 characters.
  const names = inv.loadBalancers.map((lb) => lb.name);
  expect(names).toHaveLength(2);
  expect(names.some((n) => n.endsWith(`-${feA}`))).toBe(true);
  expect(names.some((n) => n.endsWith(`-${feB}-internal`))).toBe(true);
  expect(names.every((n) => n.length <= 80 && n.startsWith(cluster.namespace.slice(0, 30)))).toBe(true);
  const own = inv.loadBalancers.find((lb) => lb.name.endsWith("-internal"))!;
  expect(own.tags).toMatchObject({
    "portico.io-service": `${cluster.namespace}/b`,
    "portico.io-service-uid": b.metadata!.uid,
  });
  expect(own.pools).toEqual([{ name: feB, addresses: ["10.0.1.10"] }]);

  await cluster.core.deleteNamespacedService({ name: "b", namespace: cluster.namespace });
  await waitFor("b's load balancer to go", async () => (await inventory(azure)).loadBalancers.length === 1);
  inv = await inventory(azure);
  expect(inv.loadBalancers[0]!.name.endsWith(`-${feA}`)).toBe(true);
});
