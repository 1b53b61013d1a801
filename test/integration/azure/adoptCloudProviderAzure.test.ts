// Moving over from cloud-provider-azure without a new address: the Service's public IP it made (named and tagged
// as it names and tags them) is taken over in place, its frontend, rule and probe on the shared load balancer
// become Portico's; a public IP the user made is used, moved to Portico's load balancer and never deleted; another
// cluster's and another Service's resources are left exactly as they were.
import { randomUUID } from "node:crypto";
import type { LoadBalancer } from "@azure/arm-network";
import { expect, test, waitFor, AZURE_WORLD, type TestAzure, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureTestConfig } from "../../harness/azure.ts";
import { azureWorld, INTERNAL, lbService, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const w = AZURE_WORLD;
/** cloud-provider-azure's base name of a Service: `a` + its UID without dashes, cut to 32 characters. */
const cpaBase = (uid: string) => `a${uid.replace(/-/g, "")}`.slice(0, 32);
const porticoFrontend = (uid: string) => `a${uid.replace(/-/g, "")}`;
const poll = { updateIntervalInMs: 20 };

/** What cloud-provider-azure leaves on the shared load balancer for one Service: frontend, rule and probe. */
function cpaParts(lbId: string, uid: string, pipId: string, nodePort: number) {
  const base = cpaBase(uid);
  return {
    frontend: { name: base, publicIPAddress: { id: pipId } },
    probe: {
      name: `${base}-TCP-80`,
      protocol: "Tcp" as const,
      port: nodePort,
      intervalInSeconds: 5,
      numberOfProbes: 2,
    },
    rule: {
      name: `${base}-TCP-80`,
      protocol: "Tcp" as const,
      frontendPort: 80,
      backendPort: 80,
      enableFloatingIP: true,
      idleTimeoutInMinutes: 4,
      frontendIPConfiguration: { id: `${lbId}/frontendIPConfigurations/${base}` },
      backendAddressPool: { id: `${lbId}/backendAddressPools/kubernetes` },
      probe: { id: `${lbId}/probes/${base}-TCP-80` },
    },
  };
}

/** cloud-provider-azure's `kubernetes` load balancer holding the given Services' parts. */
async function cpaLoadBalancer(
  azure: TestAzure,
  services: { uid: string; pipId: string; nodePort: number }[],
): Promise<LoadBalancer> {
  const lbId = `/subscriptions/${azure.subscriptionId}/resourceGroups/${w.resourceGroup}/providers/Microsoft.Network/loadBalancers/kubernetes`;
  const parts = services.map((s) => cpaParts(lbId, s.uid, s.pipId, s.nodePort));
  return azure.network.loadBalancers.createOrUpdate(
    w.resourceGroup,
    "kubernetes",
    {
      location: w.location,
      sku: { name: "Standard", tier: "Regional" },
      frontendIPConfigurations: parts.map((p) => p.frontend),
      backendAddressPools: [{ name: "kubernetes" }],
      probes: parts.map((p) => p.probe),
      loadBalancingRules: parts.map((p) => p.rule),
    },
    poll,
  );
}

/** A Service as cloud-provider-azure served it (the Service exists before Portico starts, so its UID is known). */
async function movedService(cluster: TestCluster, name: string, annotations: Record<string, string> = {}) {
  // Unclassed, served by Portico as the cluster's default load balancer, as cloud-provider-azure served it.
  const { loadBalancerClass: _class, ...spec } = lbService()!;
  const svc = await cluster.createService(name, spec, annotations);
  return { uid: svc.metadata!.uid!, nodePort: svc.spec!.ports![0]!.nodePort! };
}

/**
 * cloud-provider-azure's internal load balancer with the Service's frontend at a dynamic address that is not the
 * subnet's first free one, so that a new frontend would not get it again; returns the address.
 */
async function cpaInternalFrontend(
  azure: TestAzure,
  web: { uid: string; nodePort: number },
): Promise<string> {
  const lbId = `/subscriptions/${azure.subscriptionId}/resourceGroups/${w.resourceGroup}/providers/Microsoft.Network/loadBalancers/kubernetes-internal`;
  const subnetId = `/subscriptions/${azure.subscriptionId}/resourceGroups/${w.resourceGroup}/providers/Microsoft.Network/virtualNetworks/${w.vnetName}/subnets/${w.subnetName}`;
  const { probe, rule } = cpaParts(lbId, web.uid, "", web.nodePort);
  const body = (allocation: "Static" | "Dynamic") => ({
    location: w.location,
    sku: { name: "Standard", tier: "Regional" },
    frontendIPConfigurations: [
      {
        name: cpaBase(web.uid),
        subnet: { id: subnetId },
        privateIPAllocationMethod: allocation,
        privateIPAddress: "10.0.1.200",
      },
    ],
    backendAddressPools: [{ name: "kubernetes" }],
    probes: [probe],
    loadBalancingRules: [rule],
  });
  await azure.network.loadBalancers.createOrUpdate(
    w.resourceGroup,
    "kubernetes-internal",
    body("Static"),
    poll,
  );
  const made = await azure.network.loadBalancers.createOrUpdate(
    w.resourceGroup,
    "kubernetes-internal",
    body("Dynamic"),
    poll,
  );
  const address = made.frontendIPConfigurations![0]!.privateIPAddress!;
  expect(address).toBe("10.0.1.200");
  return address;
}

const lbOf = async (azure: TestAzure, name: string) =>
  (await inventory(azure)).loadBalancers.find((l) => l.name === name);

test("cloud-provider-azure's public IP, frontend, rule and probe are taken over in place: same public IP, same address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  const web = await movedService(cluster, "web");
  const pip = await azure.createPublicIp(`kubernetes-${cpaBase(web.uid)}`, {
    "k8s-azure-service": `${cluster.namespace}/web`,
    "k8s-azure-cluster-name": "kubernetes",
    team: "shop",
  });
  // Another Service cloud-provider-azure still serves on the same load balancer: never touched.
  const otherUid = randomUUID();
  const otherPip = await azure.createPublicIp(`kubernetes-${cpaBase(otherUid)}`, {
    "k8s-azure-service": "elsewhere/api",
    "k8s-azure-cluster-name": "kubernetes",
  });
  await cpaLoadBalancer(azure, [
    { uid: web.uid, pipId: pip.id!, nodePort: web.nodePort },
    { uid: otherUid, pipId: otherPip.id!, nodePort: 31999 },
  ]);
  const otherBefore = (await inventory(azure)).publicIps.find((p) => p.name === otherPip.name);
  // cloud-provider-azure's security rules: a shared one for both addresses, an older per-Service one.
  const nsg = await azure.network.networkSecurityGroups.get(w.resourceGroup, w.securityGroupName);
  const allow = (name: string, priority: number, destinations: string[]) => ({
    name,
    protocol: "Tcp",
    access: "Allow",
    direction: "Inbound",
    priority,
    sourcePortRange: "*",
    destinationPortRange: "80",
    sourceAddressPrefix: "Internet",
    ...(destinations.length === 1
      ? { destinationAddressPrefix: destinations[0] }
      : { destinationAddressPrefixes: destinations }),
  });
  await azure.network.networkSecurityGroups.createOrUpdate(
    w.resourceGroup,
    w.securityGroupName,
    {
      ...nsg,
      securityRules: [
        allow("k8s-azure-lb_allow_IPv4_0123456789abcdef0123456789abcdef", 500, [
          pip.ipAddress!,
          otherPip.ipAddress!,
        ]),
        allow(`${cpaBase(web.uid)}-TCP-80-Internet`, 501, [pip.ipAddress!]),
        allow("users-rule", 300, [pip.ipAddress!]),
      ],
    },
    poll,
  );

  await startPortico(cluster, {
    provider: "azure",
    defaultForUnclassed: true,
    settings: azureTestConfig({ loadBalancerName: "kubernetes", floatingIPDefault: true }),
  });
  expect(await waitForIP(cluster, "web")).toBe(pip.ipAddress);

  // What porticoctl plan would have said, told as the change made.
  const told = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: "involvedObject.name=web",
  });
  expect(told.items.map((e) => e.message).join("\n")).toContain(
    `adopt public IP ${pip.id} (cloud-provider-azure's) — address ${pip.ipAddress} kept`,
  );
  const after = await azure.network.publicIPAddresses.get(w.resourceGroup, pip.name!);
  expect(after.id).toBe(pip.id);
  expect(after.ipAddress).toBe(pip.ipAddress);
  expect(after.tags).toEqual({
    team: "shop",
    "portico.io-cluster": cluster.namespace,
    "portico.io-service": `${cluster.namespace}/web`,
    "portico.io-service-uid": web.uid,
    "portico.io-resource": "publicip",
    "portico.io-adopted-from": "cloud-provider-azure",
  });
  const fe = porticoFrontend(web.uid);
  const lb = await waitFor("Portico's rule on the taken-over load balancer", async () => {
    const found = await lbOf(azure, "kubernetes");
    return found?.rules.some((r) => r.name === `${fe}-TCP-80`) ? found : undefined;
  });
  expect(lb.tags).toMatchObject({
    "portico.io-cluster": cluster.namespace,
    "portico.io-adopted-from": "cloud-provider-azure",
  });
  expect(lb.frontends.map((f) => [f.name, f.publicIp]).sort()).toEqual(
    [
      [fe, pip.name],
      [cpaBase(otherUid), otherPip.name],
    ].sort(),
  );
  // cloud-provider-azure's rule and probe of the Service are gone, Portico's are in their place; the other
  // Service's are as they were.
  expect(lb.rules.map((r) => r.name).sort()).toEqual([`${cpaBase(otherUid)}-TCP-80`, `${fe}-TCP-80`].sort());
  expect(lb.rules.find((r) => r.name === `${fe}-TCP-80`)).toMatchObject({
    frontend: fe,
    frontendPort: 80,
    backendPort: 80,
    floatingIP: true,
  });
  // The address has left cloud-provider-azure's rules once Portico's admit its traffic; the user's rule stays.
  const rules = await waitFor("cloud-provider-azure's rules to let the address go", async () => {
    const got = (await inventory(azure)).securityRules;
    return got.some((r) => r.name === `${cpaBase(web.uid)}-TCP-80-Internet`) ? undefined : got;
  });
  expect(rules.find((r) => r.name.startsWith("k8s-azure-lb_allow"))).toMatchObject({
    destinations: [otherPip.ipAddress],
  });
  expect(rules.find((r) => r.name === "users-rule")).toBeDefined();
  expect(rules.some((r) => r.name.startsWith(`${fe}-`))).toBe(true);
  expect(lb.probes.map((p) => p.name)).toContain(`${cpaBase(otherUid)}-TCP-80`);
  expect(lb.probes.map((p) => p.name)).not.toContain(`${cpaBase(web.uid)}-TCP-80`);
  expect((await inventory(azure)).publicIps.find((p) => p.name === otherPip.name)).toEqual(otherBefore);

  // Portico's now: it goes with the Service, as it would have with cloud-provider-azure; the load balancer,
  // which Portico did not make, stays with the other Service's parts.
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("the public IP to be deleted with the Service", async () =>
    (await inventory(azure)).publicIps.some((p) => p.name === pip.name) ? undefined : true,
  );
  const left = await lbOf(azure, "kubernetes");
  expect(left?.frontends.map((f) => f.name)).toEqual([cpaBase(otherUid)]);
  expect((await inventory(azure)).publicIps.find((p) => p.name === otherPip.name)).toEqual(otherBefore);
});

test("a public IP the user made is used, moves to Portico's load balancer with its address, and survives the Service", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const web = await movedService(cluster, "web", { "service.beta.kubernetes.io/azure-pip-name": "my-ip" });
  const pip = await azure.createPublicIp("my-ip", { owner: "me" });
  await cpaLoadBalancer(azure, [{ uid: web.uid, pipId: pip.id!, nodePort: web.nodePort }]);

  // Portico's load balancer is its own (named after its cluster), so the address moves there.
  await startPortico(cluster, { provider: "azure", defaultForUnclassed: true });
  expect(await waitForIP(cluster, "web")).toBe(pip.ipAddress);
  const events = await waitFor("the Event saying traffic moves", async () => {
    const list = await cluster.core.listNamespacedEvent({
      namespace: cluster.namespace,
      fieldSelector: "involvedObject.name=web",
    });
    return list.items.find((e) => e.reason === "TrafficMoves");
  });
  expect(events.type).toBe("Warning");
  expect(events.message).toContain("the address is kept");
  const inv = await inventory(azure);
  expect(inv.loadBalancers.find((l) => l.name === "kubernetes")).toMatchObject({
    frontends: [],
    rules: [],
    probes: [],
  });
  expect(inv.loadBalancers.find((l) => l.name === cluster.namespace)?.frontends).toEqual([
    expect.objectContaining({ name: porticoFrontend(web.uid), publicIp: "my-ip" }),
  ]);
  expect(inv.publicIps.find((p) => p.name === "my-ip")?.tags).toEqual({ owner: "me" });

  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("Portico's load balancer to go with the Service", async () =>
    (await lbOf(azure, cluster.namespace)) ? undefined : true,
  );
  const kept = await azure.network.publicIPAddresses.get(w.resourceGroup, "my-ip");
  expect(kept.ipAddress).toBe(pip.ipAddress);
  expect(kept.tags).toEqual({ owner: "me" });
  // cloud-provider-azure's load balancer is not Portico's to delete.
  expect(await lbOf(azure, "kubernetes")).toBeDefined();
});

test("another cluster's public IP for a Service of the same name, and its load balancer, are never touched", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const web = await movedService(cluster, "web");
  // Named as cloud-provider-azure names this Service's, but tagged with another cluster: not this one's.
  const theirs = await azure.createPublicIp(`kubernetes-${cpaBase(web.uid)}`, {
    "k8s-azure-service": `${cluster.namespace}/web`,
    "k8s-azure-cluster-name": "another-cluster",
  });
  const otherUid = randomUUID();
  const otherPip = await azure.createPublicIp(`other-${cpaBase(otherUid)}`, {
    "k8s-azure-service": `${cluster.namespace}/web`,
    "k8s-azure-cluster-name": "other",
  });
  const lbId = `/subscriptions/${azure.subscriptionId}/resourceGroups/${w.resourceGroup}/providers/Microsoft.Network/loadBalancers/other`;
  const parts = cpaParts(lbId, otherUid, otherPip.id!, 31000);
  await azure.network.loadBalancers.createOrUpdate(
    w.resourceGroup,
    "other",
    {
      location: w.location,
      sku: { name: "Standard" },
      frontendIPConfigurations: [parts.frontend],
      backendAddressPools: [{ name: "kubernetes" }],
      probes: [parts.probe],
      loadBalancingRules: [
        { ...parts.rule, backendAddressPool: { id: `${lbId}/backendAddressPools/kubernetes` } },
      ],
    },
    poll,
  );
  const before = await inventory(azure);

  await startPortico(cluster, { provider: "azure", defaultForUnclassed: true });
  const ip = await waitForIP(cluster, "web");
  expect([theirs.ipAddress, otherPip.ipAddress]).not.toContain(ip);
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("Portico's load balancer to go with the Service", async () =>
    (await lbOf(azure, cluster.namespace)) ? undefined : true,
  );
  await waitFor("Portico's public IP to go", async () =>
    (await inventory(azure)).publicIps.length === before.publicIps.length ? true : undefined,
  );
  expect(await inventory(azure)).toEqual(before);
});

test("an internal Service's frontend on cloud-provider-azure's internal load balancer is taken over with its private address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const web = await movedService(cluster, "web", INTERNAL);
  const address = await cpaInternalFrontend(azure, web);

  await startPortico(cluster, {
    provider: "azure",
    defaultForUnclassed: true,
    settings: azureTestConfig({ loadBalancerName: "kubernetes" }),
  });
  expect(await waitForIP(cluster, "web")).toBe(address);
  // Renamed with the address pinned (a new frontend would get another), then dynamic again as the Service asks.
  const lb = await waitFor("the frontend to be dynamic again, with its address", async () => {
    const found = await lbOf(azure, "kubernetes-internal");
    return found?.frontends[0]?.allocation === "Dynamic" ? found : undefined;
  });
  expect(lb.frontends).toEqual([
    expect.objectContaining({ name: porticoFrontend(web.uid), privateIp: address, subnet: w.subnetName }),
  ]);
  expect(lb.rules.map((r) => r.name)).toEqual([`${porticoFrontend(web.uid)}-TCP-80`]);
  expect((await cluster.getService("web")).status?.loadBalancer?.ingress).toEqual([
    { ip: address, ipMode: "VIP" },
  ]);
});

test("an internal Service moves to Portico's internal load balancer with its private address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  const web = await movedService(cluster, "web", INTERNAL);
  const address = await cpaInternalFrontend(azure, web);

  await startPortico(cluster, { provider: "azure", defaultForUnclassed: true });
  expect(await waitForIP(cluster, "web")).toBe(address);
  // Made with the address pinned once cloud-provider-azure's frontend let it go, then dynamic as the Service asks.
  const lb = await waitFor("the frontend to be dynamic again, with its address", async () => {
    const found = await lbOf(azure, `${cluster.namespace}-internal`);
    return found?.frontends[0]?.allocation === "Dynamic" ? found : undefined;
  });
  expect(lb.frontends).toEqual([
    expect.objectContaining({ name: porticoFrontend(web.uid), privateIp: address, subnet: w.subnetName }),
  ]);
  expect(lb.rules.map((r) => r.name)).toEqual([`${porticoFrontend(web.uid)}-TCP-80`]);
  expect((await cluster.getService("web")).status?.loadBalancer?.ingress).toEqual([
    { ip: address, ipMode: "VIP" },
  ]);
  expect(await lbOf(azure, "kubernetes-internal")).toMatchObject({ frontends: [], rules: [], probes: [] });
});
