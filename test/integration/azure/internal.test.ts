// Internal Services: a private frontend on the cluster's internal load balancer, in the configured or annotated
// subnet, at an address ARM picks or the Service asks for; and moving between public and internal.
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const INTERNAL = "service.beta.kubernetes.io/azure-load-balancer-internal";
const SUBNET = "service.beta.kubernetes.io/azure-load-balancer-internal-subnet";
const IPV4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4";
const feOf = (uid: string) => `a${uid.replace(/-/g, "")}`;

test("internal Services share <cluster>-internal: the default subnet, an annotated one, and a requested static address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const a = await cluster.createService("a", lbService(), { [INTERNAL]: "true" });
  const b = await cluster.createService("b", lbService(), { [INTERNAL]: "true", [SUBNET]: "frontends" });
  const c = await cluster.createService("c", lbService(), { [INTERNAL]: "true", [IPV4]: "10.0.1.200" });
  const ipA = await waitForIP(cluster, "a");
  const ipB = await waitForIP(cluster, "b");
  expect(await waitForIP(cluster, "c")).toBe("10.0.1.200");
  expect(ipA).toMatch(/^10\.0\.1\.\d+$/);
  expect(ipB).toMatch(/^10\.0\.2\.\d+$/);

  const inv = await inventory(azure);
  expect(inv.loadBalancers.map((lb) => lb.name)).toEqual([`${cluster.namespace}-internal`]);
  const lb = inv.loadBalancers[0]!;
  expect(lb.frontends.sort((x, y) => x.name.localeCompare(y.name))).toEqual(
    [
      {
        name: feOf(a.metadata!.uid!),
        subnet: "nodes",
        privateIp: ipA,
        allocation: "Dynamic",
        publicIp: undefined,
      },
      {
        name: feOf(b.metadata!.uid!),
        subnet: "frontends",
        privateIp: ipB,
        allocation: "Dynamic",
        publicIp: undefined,
      },
      {
        name: feOf(c.metadata!.uid!),
        subnet: "nodes",
        privateIp: "10.0.1.200",
        allocation: "Static",
        publicIp: undefined,
      },
    ].sort((x, y) => x.name.localeCompare(y.name)),
  );
  // No public IP records them, so the load balancer does, for orphan collection after a restart.
  for (const svc of [a, b, c])
    expect(lb.tags[`portico.io-frontend-${feOf(svc.metadata!.uid!)}`]).toBe(
      `${cluster.namespace}/${svc.metadata!.name}`,
    );
  expect(inv.publicIps).toEqual([]);
  await waitFor("three allow rules", async () => (await inventory(azure)).securityRules.length === 3);
  expect((await inventory(azure)).securityRules.every((r) => r.sources.join() === "VirtualNetwork")).toBe(
    true,
  );
});

test("public to internal adds the private frontend before the public one and its public IP go; and back", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService(), {});
  const fe = feOf(svc.metadata!.uid!);
  const publicIp = await waitForIP(cluster, "web");
  await azure.clearRequests();

  await patchService(cluster, "web", { metadata: { annotations: { [INTERNAL]: "true" } } });
  const privateIp = await waitFor("a private address", async () => {
    const ip = (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.ip;
    return ip && ip !== publicIp ? ip : undefined;
  });
  expect(privateIp).toMatch(/^10\.0\.1\./);
  let inv = await inventory(azure);
  expect(inv.loadBalancers.map((lb) => lb.name)).toEqual([`${cluster.namespace}-internal`]);
  expect(inv.loadBalancers[0]!.frontends.map((f) => f.name)).toEqual([fe]);
  expect(inv.publicIps).toEqual([]);
  // Make before break: the internal load balancer was written before the public one was deleted.
  const order = (await azure.requests())
    .filter((r) => r.method !== "GET")
    .map((r) => `${r.method} ${r.path.split("/").slice(-2).join("/")}`);
  expect(order.indexOf(`PUT loadBalancers/${cluster.namespace}-internal`)).toBeLessThan(
    order.indexOf(`DELETE loadBalancers/${cluster.namespace}`),
  );
  expect(order.indexOf(`DELETE loadBalancers/${cluster.namespace}`)).toBeLessThan(
    order.findIndex((o) => o.startsWith("DELETE publicIPAddresses/")),
  );

  await patchService(cluster, "web", { metadata: { annotations: { [INTERNAL]: "false" } } });
  await waitFor("a public address again", async () => {
    const ip = (await cluster.getService("web")).status?.loadBalancer?.ingress?.[0]?.ip;
    return ip && ip !== privateIp ? ip : undefined;
  });
  inv = await inventory(azure);
  expect(inv.loadBalancers.map((lb) => lb.name)).toEqual([cluster.namespace]);
  expect(inv.publicIps).toHaveLength(1);
});

test("spec.loadBalancerIP, deprecated but still honoured, gives an internal Service that static address", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("d", lbService(undefined, { loadBalancerIP: "10.0.1.201" }), {
    [INTERNAL]: "true",
  });
  expect(await waitForIP(cluster, "d")).toBe("10.0.1.201");
  const frontend = (await inventory(azure)).loadBalancers
    .flatMap((lb) => lb.frontends)
    .find((f) => f.name === feOf(svc.metadata!.uid!));
  expect(frontend).toMatchObject({ privateIp: "10.0.1.201", allocation: "Static" });
});
