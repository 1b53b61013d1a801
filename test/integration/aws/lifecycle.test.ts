import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, readyCondition, waitForHostname } from "./fixtures.ts";
import { inventory, sharedGroups } from "./inventory.ts";

test("a LoadBalancer Service gets an internal NLB with instance targets on its nodePort", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await startPortico(cluster);
  const svc = await cluster.createService("web", lbService());
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  const hostname = await waitForHostname(cluster, "web");

  const inv = await inventory(aws);
  expect(inv.loadBalancers).toHaveLength(1);
  const lb = inv.loadBalancers[0]!;
  expect(lb.dnsName).toBe(hostname);
  expect(lb.scheme).toBe("internal");
  expect(lb.tags).toMatchObject({
    "portico.io/cluster": cluster.namespace,
    "portico.io/service": `${cluster.namespace}/web`,
    "portico.io/service-uid": svc.metadata!.uid,
  });
  expect(lb.listeners).toEqual([
    { port: 80, protocol: "TCP", targetGroupArn: inv.targetGroups[0]!.arn, certificates: [] },
  ]);
  expect(inv.targetGroups).toHaveLength(1);
  expect(inv.targetGroups[0]).toMatchObject({
    protocol: "TCP",
    port: nodePort,
    targetType: "instance",
    healthCheck: { protocol: "TCP", port: "traffic-port" },
  });
  expect(inv.targetGroups[0]!.targets).toEqual(
    world.instances.map((i) => `${i.instanceId}:${nodePort}`).sort(),
  );
  expect(inv.securityGroups).toHaveLength(1);
  // Its own group, and the cluster's shared one that the nodes admit.
  expect(lb.securityGroups.sort()).toEqual(
    [inv.securityGroups[0]!.id, (await sharedGroups(aws))[0]!.id].sort(),
  );
  expect(inv.securityGroups[0]!.ingress).toEqual(["tcp/80/0.0.0.0/0"]);

  const condition = await readyCondition(cluster, "web");
  expect(condition).toMatchObject({ status: "True", reason: "Provisioned" });
  const svcNow = await cluster.getService("web");
  expect(svcNow.metadata!.finalizers).toContain("service.kubernetes.io/load-balancer-cleanup");
});

test("deleting the Service removes everything Portico made and then the finalizer", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("the Service to be gone", async () => {
    try {
      await cluster.getService("web");
      return false;
    } catch (e) {
      return (e as { code?: number }).code === 404;
    }
  });
  const inv = await inventory(aws);
  expect(inv).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
});
