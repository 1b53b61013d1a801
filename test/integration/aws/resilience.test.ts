// The cloud misbehaving, the apiserver restarting, the leader changing: Portico converges anyway.
import { join } from "node:path";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { expect, test, TestCluster, total, waitFor } from "../../harness/index.ts";
import { PERMANENT_ERROR_RETRY_MS } from "../../../controller/reconciler.ts";
import { startPortico } from "../../harness/controller.ts";
import { ControlPlane } from "../../harness/controlPlane.ts";
import { startFaultProxy } from "../../harness/faultProxy.ts";
import { ensureTools } from "../../harness/tools.ts";
import { awsWorld, lbService, readyCondition, serviceEvents, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

test("throttling and 5xx from the cloud are retried with backoff until the Service converges", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!);
  cluster.defer(() => proxy.close());
  proxy.addRule({ action: "CreateLoadBalancer", kind: "throttle", times: 3 });
  proxy.addRule({ action: "CreateTargetGroup", kind: "unavailable", times: 2 });
  proxy.addRule({ action: "GetResources", kind: "throttle", times: 2 });
  const provider = new AwsProvider({ clusterName: cluster.namespace, endpoint: proxy.url });
  await startPortico(cluster, {}, { provider });
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  expect(proxy.seen.get("CreateLoadBalancer")).toBe(4);
  expect(proxy.seen.get("CreateTargetGroup")).toBe(3);
  const inv = await inventory(aws);
  expect(inv.loadBalancers).toHaveLength(1);
  expect(inv.targetGroups).toHaveLength(1);
  // Retries were spaced out, not fired back to back.
  const times = proxy.timeline.get("CreateLoadBalancer")!;
  expect(times[3]! - times[0]!).toBeGreaterThan(100);
});

test("a permanent cloud error is reported with its AWS code and not retried in a storm", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!);
  cluster.defer(() => proxy.close());
  proxy.addRule({ action: "CreateListener", kind: "invalid", times: 1000 });
  const provider = new AwsProvider({ clusterName: cluster.namespace, endpoint: proxy.url });
  const controller = await startPortico(cluster, {}, { provider });
  await cluster.createService("web", lbService());
  const condition = await waitFor("the failure to be reported", async () => {
    const c = await readyCondition(cluster, "web");
    return c?.status === "False" ? c : undefined;
  });
  expect(condition.reason).toBe("CloudRejected");
  expect(condition.message).toMatch(/CreateListener failed: ValidationError: 1 validation error detected/);
  expect(
    (await serviceEvents(cluster, "web")).some(
      (e) => e.type === "Warning" && e.reason === "SyncLoadBalancerFailed",
    ),
  ).toBe(true);
  // The pass is over and the next look at the Service is minutes away: no retry can come sooner.
  const key = `${cluster.namespace}/web`;
  const { queue } = controller.manager;
  const dueInMs = await waitFor(
    "the next look to be scheduled",
    () => !queue.waiting(key) && queue.dueInMs(key),
  );
  expect(dueInMs).toBeGreaterThan(PERMANENT_ERROR_RETRY_MS - 60_000);
  expect(proxy.seen.get("CreateListener")).toBe(1);
});

test("informers survive an apiserver restart: changes made after it are still seen", async ({ aws }) => {
  const tools = await ensureTools("cluster");
  const plane = await ControlPlane.start(tools, await mkdtemp(join(tmpdir(), "portico-own-plane-")));
  try {
    const cluster = await TestCluster.create(plane.kubeconfig, "restart");
    await awsWorld(cluster, aws, 1);
    await startPortico(cluster);
    await cluster.createService("before", lbService());
    await waitForHostname(cluster, "before");
    await plane.restartApiserver();
    await cluster.createService("after", lbService());
    await waitForHostname(cluster, "after");
    await cluster.core.deleteNamespacedService({ name: "before", namespace: cluster.namespace });
    await waitFor(
      "the deleted Service's NLB to be removed",
      async () => (await inventory(aws)).loadBalancers.length === 1,
      { timeoutMs: 30_000 },
    );
    await cluster.cleanup();
  } finally {
    await plane.stop();
  }
});

test("two replicas: one leads and reconciles; when it stops, the other takes over", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const election = (identity: string) => ({
    leaderElection: {
      enabled: true,
      namespace: cluster.namespace,
      name: "portico",
      identity,
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 200,
    },
  });
  const a = await startPortico(cluster, election("a"));
  const b = await startPortico(cluster, election("b"));
  const leader = await waitFor("a leader", () => (a.isLeader() ? a : b.isLeader() ? b : undefined));
  const follower = leader === a ? b : a;
  await cluster.createService("one", lbService());
  await waitForHostname(cluster, "one");
  const reconciled = (c: typeof a) => total(c.metrics.reconciles);
  expect(await reconciled(follower)).toBe(0);
  expect(follower.isLeader()).toBe(false);

  await leader.stop();
  await waitFor("the follower to lead", () => follower.isLeader());
  await cluster.createService("two", lbService());
  await waitForHostname(cluster, "two");
  expect(await reconciled(follower)).toBeGreaterThan(0);
  expect((await inventory(aws)).loadBalancers).toHaveLength(2);
});
