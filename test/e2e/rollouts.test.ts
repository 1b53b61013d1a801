// Changes users make every day, under steady client load through the LoadBalancer address: a rolling update
// of the workload, the leading controller pod deleted, the speaker DaemonSet rolled. Every request the
// client sent is accounted for.
import { CoordinationV1Api, CoreV1Api } from "@kubernetes/client-node";
import { mergePatch } from "../../shared/patch.ts";
import {
  ClientLoad,
  clusterSettled,
  describe,
  expect,
  outages,
  test,
  waitFor,
  type E2eNamespace,
} from "../harness/e2e.ts";
import { connectionOutcomes, LongLivedLoad } from "../harness/longLivedLoad.ts";
import { drainNode, kubectl } from "../harness/localCluster/kubectl.ts";
import { rollOut } from "../harness/localCluster/rollout.ts";
import { steadyAnnouncer } from "../harness/nodeLoss.ts";

const SYSTEM = "portico-system";

async function serving(ns: E2eNamespace, replicas: number, drainSeconds = 0): Promise<string> {
  await ns.deployEcho("echo", replicas, { drainSeconds });
  await ns.createLoadBalancer("web", "echo");
  const address = await ns.waitForAddress("web");
  await ns.waitAvailable("echo");
  // What earlier tests did (a node booted again takes its addresses back) is over before the load starts,
  // so the failures counted are the change's own.
  await clusterSettled(ns.context);
  await steadyAnnouncer(ns.context, address);
  return address;
}

function report(what: string, results: Awaited<ReturnType<ClientLoad["stop"]>>): ReturnType<typeof outages> {
  const o = outages(results);
  const first = Math.min(...results.map((r) => r.start));
  const failures = results.filter((r) => !r.ok).map((r) => `+${r.start - first} ms ${r.error}`);
  console.log(
    `${what}: ${o.failed} of ${o.total} requests failed, longest gap ${o.longestMs} ms` +
      (failures.length ? ` (${failures.join("; ")})` : ""),
  );
  return o;
}

describe("under steady client load", () => {
  test("a rolling update of the workload loses no request: terminating pods are drained", async ({ ns }) => {
    const address = await serving(ns, 2, 3);
    const load = new ClientLoad(ns.context, `http://${address}/`);
    await load.waitSteady();
    const before = new Set(load.results.filter((r) => r.ok).map((r) => r.pod));
    // A change of the pod template rolls every pod, one new one at a time.
    await ns.apps.patchNamespacedDeployment(
      {
        name: "echo",
        namespace: ns.name,
        body: { spec: { template: { metadata: { annotations: { "e2e.portico.io/rev": "2" } } } } },
      },
      mergePatch,
    );
    await ns.waitAvailable("echo");
    // The old pods are gone only once their drain is over.
    await waitFor(
      "the old pods to be gone",
      async () => {
        const pods = await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo" });
        return pods.items.every((p) => !before.has(p.metadata!.name)) || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await load.waitSteady();
    const results = await load.stop();
    const after = new Set(results.slice(-10).map((r) => r.pod));
    expect([...after].some((pod) => before.has(pod))).toBe(false);
    expect(report("rolling update", results).failed).toBe(0);
  });

  test("kubectl drain of the announcing node loses no request: the address moves to another node", async ({
    ns,
  }) => {
    await ns.deployEcho("echo", 3, { drainSeconds: 3, spread: true });
    await ns.createLoadBalancer("web", "echo");
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    await clusterSettled(ns.context);
    const announcer = (await steadyAnnouncer(ns.context, address)).layout.name;
    const load = new ClientLoad(ns.context, `http://${address}/`);
    await load.waitSteady();
    const drained = (async () => {
      try {
        await drainNode(ns.context, announcer, 120);
      } finally {
        await kubectl(ns.context, "uncordon", announcer);
      }
    })();
    // Cordoning comes first: the address moves off the node (make-before-break), its pod is evicted (and drains).
    await waitFor(
      "another node to answer for the address",
      async () =>
        (await steadyAnnouncer(ns.context, address, 2)).layout.name !== announcer ? true : undefined,
      { timeoutMs: 60_000, intervalMs: 0 },
    );
    await drained;
    await load.waitSteady();
    expect(report("announcing node drained", await load.stop()).failed).toBe(0);
  });

  test("deleting the leading controller pod keeps the address reachable; the other replica takes over", async ({
    ns,
  }) => {
    const address = await serving(ns, 2);
    const load = new ClientLoad(ns.context, `http://${address}/`);
    await load.waitSteady();
    const kc = ns.kc;
    const leases = kc.makeApiClient(CoordinationV1Api);
    const lease = (await leases.listNamespacedLease({ namespace: SYSTEM })).items.find((l) =>
      l.metadata?.name?.startsWith("portico"),
    );
    const leader = lease?.spec?.holderIdentity;
    expect(leader, "the controllers' Lease names a holder").toBeTruthy();
    const core = kc.makeApiClient(CoreV1Api);
    const pods = await core.listNamespacedPod({
      namespace: SYSTEM,
      labelSelector: "app.kubernetes.io/component=controller",
    });
    const leaderPod = pods.items.find((p) => leader!.startsWith(p.metadata!.name!));
    expect(leaderPod, `a controller pod named in holder ${leader}`).toBeDefined();
    await core.deleteNamespacedPod({ name: leaderPod!.metadata!.name!, namespace: SYSTEM });
    // Another replica holds the Lease, and Portico still serves: a new Service gets its address.
    await waitFor(
      "another controller to hold the Lease",
      async () => {
        const l = await leases.readNamespacedLease({ name: lease!.metadata!.name!, namespace: SYSTEM });
        const holder = l.spec?.holderIdentity;
        return (holder && !holder.startsWith(leaderPod!.metadata!.name!)) || undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    await ns.createLoadBalancer("web2", "echo");
    await ns.waitForAddress("web2", 90_000);
    const results = await load.stop();
    expect(report("leader controller deleted", results).failed).toBe(0);
  });

  test("rolling the speaker DaemonSet loses no request and cuts no connection: the address stays on its node", async ({
    ns,
  }) => {
    const address = await serving(ns, 2);
    const announcer = await steadyAnnouncer(ns.context, address);
    const load = new ClientLoad(ns.context, `http://${address}/`);
    const held = new LongLivedLoad(ns.context, `http://${address}/`, { connections: 4 });
    await load.waitSteady();
    await held.waitSteady(4);
    await rollOut(ns.kc, "DaemonSet", "portico-speaker", SYSTEM, 180_000);
    await load.waitSteady();
    await held.waitSteady(4);
    const o = report("speaker DaemonSet rolled", await load.stop());
    const connections = connectionOutcomes(await held.stop());
    console.log(`speaker DaemonSet rolled, long-lived connections: ${JSON.stringify(connections)}`);
    // Each speaker the update replaces says it restarts, and the others keep its addresses for the new pod: the
    // address never moves, so nothing through its node is cut.
    expect((await steadyAnnouncer(ns.context, address)).layout.name).toBe(announcer.layout.name);
    expect(o.failed).toBe(0);
    expect(connections).toMatchObject({ failed: 0, cut: 0 });
    expect(connections.requests).toBeGreaterThan(40);
  });
});
