// What Portico owns, it finds again by tags, adopts after a restart and cleans up; what it does not own,
// it never touches.
import { CreateSecurityGroupCommand } from "@aws-sdk/client-ec2";
import {
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, mark, test, waitFor, waitForNotReady } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, patchService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const gone = async (fn: () => Promise<unknown>) =>
  fn().then(
    () => false,
    (e: { code?: number }) => e.code === 404,
  );

test("Services of other classes, and unclassed ones when Portico is not the default, are left strictly alone", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("other", lbService(undefined, { loadBalancerClass: "example.com/other-lb" }));
  await cluster.createService("unclassed", {
    type: "LoadBalancer",
    selector: { app: "x" },
    ports: [{ port: 80 }],
  });
  await cluster.createService("mine", lbService());
  await waitForHostname(cluster, "mine");
  for (const name of ["other", "unclassed"]) {
    const svc = await cluster.getService(name);
    expect(svc.metadata!.finalizers ?? []).toEqual([]);
    expect(svc.metadata!.annotations ?? {}).toEqual({});
    expect(svc.status?.loadBalancer?.ingress ?? []).toEqual([]);
    expect(svc.status?.conditions ?? []).toEqual([]);
  }
  expect((await inventory(aws)).loadBalancers).toHaveLength(1);
});

test("as the cluster default, Portico serves unclassed Services too", async ({ cluster, aws }) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster, { defaultForUnclassed: true });
  await cluster.createService("unclassed", {
    type: "LoadBalancer",
    selector: { app: "x" },
    ports: [{ port: 80 }],
  });
  await waitForHostname(cluster, "unclassed");
});

test("a Service that stops being a LoadBalancer loses its NLB, status and finalizer", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await patchService(cluster, "web", {
    spec: {
      type: "ClusterIP",
      loadBalancerClass: null,
      externalTrafficPolicy: null,
      allocateLoadBalancerNodePorts: null,
    },
  });
  await waitFor(
    "the finalizer to be dropped",
    async () => !(await cluster.getService("web")).metadata!.finalizers?.length,
  );
  const svc = await cluster.getService("web");
  expect(svc.metadata!.annotations?.["portico.io/managed-by"]).toBeUndefined();
  expect(svc.status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect(svc.status?.conditions?.find((c) => c.type === "portico.io/LoadBalancerReady")).toBeUndefined();
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
});

test("resources without Portico's tags, or another cluster's, are never touched", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const subnets = world.network.subnets.map((s) => s.subnetId);
  await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: "users-own-nlb",
      Type: "network",
      Scheme: "internal",
      Subnets: subnets,
    }),
  );
  await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: "other-cluster-nlb",
      Type: "network",
      Scheme: "internal",
      Subnets: subnets,
      Tags: [
        { Key: "portico.io/cluster", Value: "another-cluster" },
        { Key: "portico.io/service-uid", Value: "x" },
        { Key: "portico.io/service", Value: "a/b" },
      ],
    }),
  );
  await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: "users-own-tg",
      Protocol: "TCP",
      Port: 80,
      VpcId: world.network.vpcId,
    }),
  );
  await aws.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: "users-own-sg",
      Description: "mine",
      VpcId: world.network.vpcId,
    }),
  );
  const controller = await startPortico(cluster, { orphanCollectionPeriodMs: 200 });
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("the Service to be gone", () => gone(() => cluster.getService("web")));
  // Orphan collection has had several whole rounds to (wrongly) act.
  const collected = await mark(controller.metrics.orphanCollections);
  await collected("three more orphan collections", 3);
  expect(controller.isLeader()).toBe(true);
  const inv = await inventory(aws);
  expect(inv.loadBalancers.map((lb) => lb.name).sort()).toEqual(["other-cluster-nlb", "users-own-nlb"]);
  expect(inv.targetGroups.map((tg) => tg.name)).toEqual(["users-own-tg"]);
  // Only Portico-tagged groups are listed by the inventory; the user's group is still in EC2.
  expect(inv.securityGroups).toEqual([]);
});

test("an NLB whose name Portico would use but did not make is not adopted", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: "taken-name",
      Type: "network",
      Scheme: "internal",
      Subnets: world.network.subnets.map((s) => s.subnetId),
    }),
  );
  await startPortico(cluster);
  await cluster.createService("web", lbService(), {
    "service.beta.kubernetes.io/aws-load-balancer-name": "taken-name",
  });
  const condition = await waitForNotReady(cluster, "web");
  expect(condition.reason).toBe("LoadBalancerNameTaken");
  const inv = await inventory(aws);
  expect(inv.loadBalancers.map((lb) => lb.name)).toEqual(["taken-name"]);
  expect(inv.loadBalancers[0]!.listeners).toEqual([]);
});

test("a controller restarted mid-way adopts what it made: no duplicates, no orphans, nothing lost", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 2);
  const first = await startPortico(cluster);
  const names = Array.from({ length: 8 }, (_, i) => `svc-${i}`);
  await Promise.all(names.map((n) => cluster.createService(n, lbService())));
  // Stop as soon as the first NLB exists: the others are somewhere between nothing and done.
  await waitFor("the first NLB", async () => (await inventory(aws)).loadBalancers.length > 0, {
    intervalMs: 20,
  });
  await first.stop();
  // While no controller runs, one Service is deleted for good (its finalizer removed by hand).
  await patchService(cluster, "svc-7", { metadata: { finalizers: null } });
  await cluster.core.deleteNamespacedService({ name: "svc-7", namespace: cluster.namespace });

  await startPortico(cluster);
  for (const n of names.slice(0, 7)) await waitForHostname(cluster, n);
  await waitFor("svc-7's orphans to be collected", async () => {
    const inv = await inventory(aws);
    return inv.loadBalancers.length === 7 && inv.targetGroups.length === 7 && inv.securityGroups.length === 7;
  });
  const inv = await inventory(aws);
  const owners = inv.loadBalancers.map((lb) => lb.tags["portico.io/service"]).sort();
  expect(owners).toEqual(
    names
      .slice(0, 7)
      .map((n) => `${cluster.namespace}/${n}`)
      .sort(),
  );
  expect(new Set(inv.loadBalancers.map((lb) => lb.name)).size).toBe(7);
  for (const lb of inv.loadBalancers) {
    expect(lb.listeners).toHaveLength(1);
    const tg = inv.targetGroups.find((t) => t.arn === lb.listeners[0]!.targetGroupArn);
    expect(tg?.targets).toHaveLength(2);
  }
});
