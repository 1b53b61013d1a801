// The Serving condition on AWS: an NLB that is made but has no target, or whose targets all fail, is not shown
// as serving; a Warning says so, a Normal Event says when it recovers; once traffic flows, nothing more is asked.
import { SERVING_CONDITION } from "../../../controller/status.ts";
import { expect, mark, mergePatch, test, total, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname, waitForServiceEvent } from "./fixtures.ts";

async function serving(cluster: TestCluster, name: string) {
  const svc = await cluster.getService(name);
  return svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
}

test("a Service whose target-node labels match no node is made but not serving, and serves once a node matches", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await startPortico(cluster);
  await cluster.createEndpointSlice(
    "nowhere",
    [{ ip: "10.0.0.50", nodeName: world.nodes[1] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("nowhere", lbService(), {
    "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "role=edge",
  });
  await waitForHostname(cluster, "nowhere");
  const none = await waitFor("Serving False", async () => {
    const c = await serving(cluster, "nowhere");
    return c?.status === "False" ? c : undefined;
  });
  expect(none.reason).toBe("NoTargets");
  expect(none.message).toMatch(/no target is registered for port 80/);
  const ready = (await cluster.getService("nowhere")).status?.conditions?.find(
    (c) => c.type === "portico.io/LoadBalancerReady",
  );
  expect(ready).toMatchObject({ status: "True", reason: "Provisioned" });
  expect(ready?.message).not.toMatch(/serves/);
  // Events follow the condition they tell of (the controller writes the condition first).
  const warning = await waitForServiceEvent(cluster, "nowhere", "Warning", "NoTargets");
  expect(warning.message).toBe(none.message);

  await cluster.core.patchNode(
    { name: world.nodes[0]!, body: { metadata: { labels: { role: "edge" } } } },
    mergePatch,
  );
  // The node's change brings the Service back, and the Serving condition follows the new target's health checks
  // with the controller's backoff (5 s, then 10 s...): on a loaded machine that can take a while.
  const flowing = await waitFor(
    "Serving True",
    async () => {
      const c = await serving(cluster, "nowhere");
      return c?.status === "True" ? c : undefined;
    },
    { timeoutMs: 90_000 },
  );
  expect(flowing.reason).toBe("TargetsHealthy");
  expect(flowing.message).toBe("1 of 1 targets healthy");
  const recovered = await waitForServiceEvent(cluster, "nowhere", "Normal", "TargetsHealthy");
  expect(recovered.message).toMatch(/^Traffic reaches backends again/);
});

// The emulator calls every target healthy the moment it is registered (and a real NLB may keep reporting the last
// result for a while after a change): the cluster's endpoints decide first.
test("instance targets with no ready endpoint, or with Local and the only endpoint off the targets, are not serving", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await startPortico(cluster);
  // An empty EndpointSlice, as the EndpointSlice controller writes it for a selector that matches no pod.
  await cluster.createEndpointSlice("cluster", [], [{ name: "http", port: 8080 }]);
  await cluster.createService("cluster", lbService());
  await cluster.createService("local", lbService(undefined, { externalTrafficPolicy: "Local" }));
  for (const name of ["cluster", "local"]) {
    await waitForHostname(cluster, name);
    const c = await waitFor(`${name} Serving False`, async () => {
      const c = await serving(cluster, name);
      return c?.status === "False" ? c : undefined;
    });
    expect(c.reason).toBe("NoReadyEndpoints");
    const warning = await waitForServiceEvent(cluster, name, "Warning", "NoReadyEndpoints");
    expect(warning.message).toBe(c.message);
  }

  // Local: the one endpoint runs on a node that is not a target (left out by the target-node labels).
  await cluster.core.patchNode(
    { name: world.nodes[0]!, body: { metadata: { labels: { role: "edge" } } } },
    mergePatch,
  );
  await cluster.createEndpointSlice(
    "edge",
    [{ ip: "10.0.0.51", nodeName: world.nodes[1] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("edge", lbService(undefined, { externalTrafficPolicy: "Local" }), {
    "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "role=edge",
  });
  await waitForHostname(cluster, "edge");
  const off = await waitFor("edge Serving False", async () => {
    const c = await serving(cluster, "edge");
    return c?.status === "False" ? c : undefined;
  });
  expect(off.reason).toBe("NoLocalEndpoints");
  expect(off.message).toContain(`they run on ${world.nodes[1]}, which is not a target`);

  // The endpoint arrives on the target node: serving, as ELBv2 reports.
  await cluster.createEndpointSlice(
    "edge",
    [{ ip: "10.0.0.52", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
    "edge-2",
  );
  const on = await waitFor(
    "edge Serving True",
    async () => {
      const c = await serving(cluster, "edge");
      return c?.status === "True" ? c : undefined;
    },
    { timeoutMs: 90_000 },
  );
  expect(on.reason).toBe("TargetsHealthy");
});

test("once traffic flows and nothing changes, target health is not polled", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 2);
  // Orphan collection every second: its count shows the controller's timers turning while nothing is polled.
  const controller = await startPortico(cluster, { orphanCollectionPeriodMs: 1000 });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.53", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  await waitForHostname(cluster, "web");
  await waitFor("Serving True", async () => (await serving(cluster, "web"))?.status === "True");
  const healthReads = { operation: "elbv2:DescribeTargetHealth" };
  const before = await total(controller.metrics.cloudCalls, healthReads);
  const collected = await mark(controller.metrics.orphanCollections);
  // Longer than the traffic polls' first intervals (5 and 10 s), counted in the controller's own passes.
  await collected("twelve more orphan collections", 12, { timeoutMs: 60_000 });
  expect(await total(controller.metrics.cloudCalls, healthReads)).toBe(before);
});
