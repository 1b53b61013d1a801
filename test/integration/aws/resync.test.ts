// A level-triggered controller looks again and again; when nothing changed, it must change nothing.
import { expect, test, waitFor, waitForServing } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { AwsProvider } from "../../../providers/aws/provider.ts";
import { awsWorld, lbService, serviceEvents, waitForHostname } from "./fixtures.ts";

const MUTATING = /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;

test("a no-change resync makes no mutating cloud call, writes no status and records no event", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 3);
  const controller = await startPortico(cluster);
  await cluster.createEndpointSlice("ip", [{ ip: "10.0.0.40" }], [{ name: "http", port: 8080 }]);
  await cluster.createEndpointSlice(
    "instance",
    [{ ip: "10.0.0.41", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("instance", lbService(undefined, { externalTrafficPolicy: "Local" }));
  await cluster.createService("ip", lbService(), {
    "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
  });
  await waitForHostname(cluster, "instance");
  await waitForHostname(cluster, "ip");
  // Until their targets pass their first health checks the controller looks again (Serving Unknown).
  await waitForServing(cluster, "instance");
  await waitForServing(cluster, "ip");
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const before = new Map((controller.provider as AwsProvider).clients.calls);
  const versions = await Promise.all(
    ["instance", "ip"].map(async (n) => (await cluster.getService(n)).metadata!.resourceVersion),
  );
  const events =
    (await serviceEvents(cluster, "instance")).length + (await serviceEvents(cluster, "ip")).length;

  const reconciles = () =>
    controller.metrics.reconciles
      .get()
      .then((m) => m.values.find((v) => v.labels.outcome === "unchanged")?.value ?? 0);
  const unchangedBefore = await reconciles();
  controller.manager.queue.add(`${cluster.namespace}/instance`);
  controller.manager.queue.add(`${cluster.namespace}/ip`);
  await waitFor("both resyncs to finish", async () => (await reconciles()) >= unchangedBefore + 2);

  const calls = (controller.provider as AwsProvider).clients.calls;
  const made = [...calls.entries()]
    .map(([op, n]) => [op, n - (before.get(op) ?? 0)] as const)
    .filter(([, n]) => n > 0);
  expect(made.length).toBeGreaterThan(0);
  expect(made.filter(([op]) => MUTATING.test(op))).toEqual([]);
  expect(
    await Promise.all(
      ["instance", "ip"].map(async (n) => (await cluster.getService(n)).metadata!.resourceVersion),
    ),
  ).toEqual(versions);
  expect(
    (await serviceEvents(cluster, "instance")).length + (await serviceEvents(cluster, "ip")).length,
  ).toBe(events);
});
