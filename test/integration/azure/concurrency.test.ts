// Many Services on one shared load balancer at once: reconciles run concurrently, each edits only its own parts
// under etags, and nothing is lost. Also what a Service costs in ARM requests, and throttling.
import { buildIntent } from "../../../controller/intent.ts";
import { AZURE_CLASS, expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, serviceEvents, readyCondition, waitForIP } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const feOf = (uid: string) => `a${uid.replace(/-/g, "")}`;

test("20 Services created at once on the shared load balancer all converge, each with its own parts", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 3);
  // Writes take a while, as in ARM, so reconciles overlap and meet each other's running operations and etags.
  await azure.configure({ operationDurationMs: 100 });
  await startPortico(cluster, { provider: "azure", workers: 8 });
  const names = Array.from({ length: 20 }, (_, i) => `svc-${String(i).padStart(2, "0")}`);
  const created = await Promise.all(
    names.map((n, i) =>
      cluster.createService(n, lbService([{ name: "http", port: 80 + i, targetPort: 8080 }])),
    ),
  );
  const ips = new Map<string, string>();
  for (const n of names) ips.set(n, await waitForIP(cluster, n, 60_000));

  const inv = await inventory(azure);
  expect(inv.loadBalancers).toHaveLength(1);
  const lb = inv.loadBalancers[0]!;
  expect(lb.frontends).toHaveLength(20);
  expect(lb.pools).toEqual([{ name: "portico-nodes", addresses: world.nodeIPs }]);
  for (const [i, svc] of created.entries()) {
    const fe = feOf(svc.metadata!.uid!);
    const name = svc.metadata!.name!;
    const pip = inv.publicIps.find((p) => p.tags["portico.io-service-uid"] === svc.metadata!.uid);
    expect(pip, `public IP of ${name}`).toMatchObject({ address: ips.get(name), usedBy: fe });
    expect(lb.frontends.find((f) => f.name === fe)?.publicIp).toBe(pip!.name);
    expect(lb.rules.filter((r) => r.frontend === fe)).toEqual([
      {
        name: `${fe}-TCP-${80 + i}`,
        protocol: "Tcp",
        frontendPort: 80 + i,
        backendPort: svc.spec!.ports![0]!.nodePort,
        frontend: fe,
        pool: "portico-nodes",
        probe: `${fe}-TCP-${80 + i}`,
        floatingIP: false,
        tcpReset: true,
      },
    ]);
    expect(lb.probes.filter((p) => p.name.startsWith(fe))).toEqual([
      { name: `${fe}-TCP-${80 + i}`, protocol: "Tcp", port: svc.spec!.ports![0]!.nodePort },
    ]);
  }
  expect(new Set(ips.values()).size).toBe(20);
  expect(inv.publicIps).toHaveLength(20);
  await waitFor("20 allow rules", async () => (await inventory(azure)).securityRules.length === 20);
  const priorities = (await inventory(azure)).securityRules.map((r) => r.priority);
  expect(new Set(priorities).size).toBe(20);
  // Edits that met in the writer went out together: about one load balancer write per two Services.
  expect((await azure.requestCounts())["PUT loadBalancers"]).toBeLessThanOrEqual(10);
});

test("a new public Service costs nine ARM requests (writes waited for by reading what they wrote), and a resync that finds nothing to change only reads", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  const controller = await startPortico(cluster, { provider: "azure" });
  await cluster.createService("warm", lbService());
  await waitForIP(cluster, "warm");
  await azure.clearRequests();
  await cluster.createService("web", lbService([{ name: "http", port: 81, targetPort: 8080 }]));
  // The status is written after the last write of the reconcile; reading the emulator would count too.
  await waitForIP(cluster, "web");
  expect(await azure.requestCounts()).toEqual({
    "GET loadBalancers (list)": 1,
    "GET publicIPAddresses (list)": 1,
    "GET networkSecurityGroups": 2,
    "PUT publicIPAddresses": 1,
    "PUT loadBalancers": 1,
    "GET loadBalancers": 1,
    "PUT networkSecurityGroups": 1,
    "GET publicIPAddresses": 1,
  });

  // The same reconcile again, now that everything is in place: reads only, nothing to change.
  await azure.clearRequests();
  const svc = await cluster.getService("web");
  const nodes = (await cluster.core.listNode({ labelSelector: cluster.nodeSelector })).items;
  const intent = buildIntent(svc, nodes, [], AZURE_CLASS);
  const result = await controller.provider.ensure(intent);
  expect(result.changes).toEqual([]);
  expect(result.ingress).toEqual(svc.status!.loadBalancer!.ingress);
  expect(await azure.requestCounts()).toEqual({
    "GET loadBalancers (list)": 1,
    "GET publicIPAddresses (list)": 1,
    "GET networkSecurityGroups": 1,
  });
});

test("throttling (429 with Retry-After) is waited out, reported while it lasts, and the Service converges", async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  // More throttled answers than the client retries: the reconcile fails and comes back after Retry-After.
  await azure.addFault({
    kind: "throttle",
    methods: ["PUT"],
    pathContains: "/loadBalancers/",
    count: 4,
    retryAfterSeconds: 1,
  });
  await cluster.createService("web", lbService());
  await waitForIP(cluster, "web");
  expect(await readyCondition(cluster, "web")).toMatchObject({ status: "True", reason: "Provisioned" });
  const warnings = (await serviceEvents(cluster, "web")).filter((e) => e.type === "Warning");
  expect(warnings.map((e) => e.reason)).toContain("SyncLoadBalancerFailed");
  expect(warnings.find((e) => e.reason === "SyncLoadBalancerFailed")!.message).toContain(
    "SubscriptionRequestsThrottled",
  );
  expect((await inventory(azure)).loadBalancers[0]!.frontends).toHaveLength(1);
});
