// `make bench-cluster-changes` (`make bench-cluster` runs it too): the changes operators make every day, on the
// local cluster with Portico's metal overlay (L2), under a client sending a request every 50 ms on a new
// connection plus 10 long-lived connections each sending one every 500 ms. Per change, over BENCH_TRIALS trials:
// the new connections' failed requests and longest gap, and the long-lived connections cut under the client
// (a request failed on a connection that had carried one) or ended properly by the server and reopened.
//   - a rolling update of the 3-replica Deployment, behind an `externalTrafficPolicy: Cluster` Service and a
//     `Local` one (pods serve on 15 s past SIGTERM, telling kept-alive clients to reconnect);
//   - `kubectl drain` of the node announcing the address (its pod evicted too); then, measured on its own,
//     `kubectl uncordon` of it (the address stays where it moved: a move back would cut connections);
//   - a rolling update of Portico's controller Deployment, then of its speaker DaemonSet.
// Then the same in BGP mode (bgpMode.ts: a router peering with every node, ECMP, the client behind it): a
// rolling update of the Deployment, `kubectl drain` of a node hosting a pod, and a rolling update of the speakers.
// The goal is 0 failed requests and 0 cut connections in every row.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectionOutcomes, LongLivedLoad } from "../test/harness/longLivedLoad.ts";
import {
  describeCluster,
  INSTALL_NAMESPACE,
  startClusterWithPortico,
} from "../test/harness/localCluster/install.ts";
import { ClientLoad, clusterSettled, E2eNamespace, outages } from "../test/harness/localCluster/usage.ts";
import { drainNode, kubectl } from "../test/harness/localCluster/kubectl.ts";
import { rollOut } from "../test/harness/localCluster/rollout.ts";
import { steadyAnnouncer } from "../test/harness/nodeLoss.ts";
import type { E2eContext } from "../test/harness/e2eSetup.ts";
import { startBgpMode } from "./bgpMode.ts";
import { report, sleep } from "./report.ts";

const POOL = "192.0.2.240/28";
const TRIALS = Number(process.env.BENCH_TRIALS ?? 3);
const DRAIN_S = 15;
/** After a change is complete and the load answered again, how long the clients keep sending. */
const SETTLE_MS = 10_000;
/** Which changes to measure (names below, comma-separated); default: all. */
const CHANGES = process.env.BENCH_CHANGES?.split(",");

type Change = (ns: E2eNamespace, address: string) => Promise<void>;

/** Replaces every pod of a workload (a rolling update) and waits for it to finish. */
function roll(ns: E2eNamespace, kind: "Deployment" | "DaemonSet", name: string, namespace: string) {
  return rollOut(ns.kc, kind, name, namespace);
}

/** The node drained by the drain row, uncordoned by its cleanup or by the uncordon row. */
let drained: string | undefined;

async function drain(ns: E2eNamespace, address: string) {
  drained = (await steadyAnnouncer(ns.context, address)).layout.name;
  await drainNode(ns.context, drained);
}

/** BGP mode: every node announces; the node drained is the first, which hosts one of the pods. */
async function drainFirst(ns: E2eNamespace) {
  drained = ns.context.nodes[0]!.layout.name;
  await drainNode(ns.context, drained);
}

async function uncordon(ns: E2eNamespace) {
  if (!drained) return;
  await kubectl(ns.context, "uncordon", drained);
  drained = undefined;
  // The evicted pod, pending while its node was cordoned (one pod per node), runs there again.
  await ns.waitAvailable("echo", 180_000);
}

interface Measured {
  /** The Service whose address the clients use. */
  service: string;
  /** Where the clients are: on the LAN (L2 mode, the default) or behind the BGP router. */
  bgp?: true;
  /** Done before the clients start. */
  prepare?: Change;
  /** What the clients see. */
  change: Change;
  /** Done after the clients stopped, before the next trial. */
  cleanup?: Change;
}

const changes: Record<string, Measured> = {
  "rolling update of the Deployment, Cluster": {
    service: "web",
    change: (ns) => roll(ns, "Deployment", "echo", ns.name),
  },
  "rolling update of the Deployment, Local": {
    service: "web-local",
    change: (ns) => roll(ns, "Deployment", "echo", ns.name),
  },
  "kubectl drain of the announcing node, Cluster": {
    service: "web",
    change: drain,
    cleanup: uncordon,
  },
  // After maintenance: the node is back, its pod runs there again, and the address stays where it moved.
  "kubectl uncordon of that node, Cluster": {
    service: "web",
    prepare: drain,
    change: uncordon,
  },
  "rolling update of Portico's controller": {
    service: "web",
    change: (ns) => roll(ns, "Deployment", "portico-controller", INSTALL_NAMESPACE),
  },
  "rolling update of Portico's speakers": {
    service: "web",
    change: (ns) => roll(ns, "DaemonSet", "portico-speaker", INSTALL_NAMESPACE),
  },
  "BGP: rolling update of the Deployment, Cluster": {
    service: "web-bgp",
    bgp: true,
    change: (ns) => roll(ns, "Deployment", "echo", ns.name),
  },
  "BGP: kubectl drain of a node, Cluster": {
    service: "web-bgp",
    bgp: true,
    change: drainFirst,
    cleanup: uncordon,
  },
  "BGP: rolling update of Portico's speakers": {
    service: "web-bgp",
    bgp: true,
    change: (ns) => roll(ns, "DaemonSet", "portico-speaker", INSTALL_NAMESPACE),
  },
};

async function trial(
  ns: E2eNamespace,
  address: string,
  { prepare, change, cleanup }: Measured,
  clients: E2eContext,
) {
  await prepare?.(ns, address);
  const url = `http://${address}/`;
  const fresh = new ClientLoad(clients, url, { intervalMs: 50, timeoutMs: 1000 });
  const held = new LongLivedLoad(clients, url, { connections: 10, intervalMs: 500, timeoutMs: 2000 });
  try {
    await fresh.waitSteady(20, 120_000);
    await held.waitSteady(10, 3, 120_000);
    const from = Date.now();
    await change(ns, address);
    await fresh.waitSteady(20, 300_000);
    await held.waitSteady(10, 3, 300_000);
    await sleep(SETTLE_MS);
    const seconds = +((Date.now() - from) / 1000).toFixed(1);
    return { seconds, fresh: outages(await fresh.stop()), held: connectionOutcomes(await held.stop()) };
  } finally {
    await fresh.stop();
    await held.stop();
    await cleanup?.(ns, address);
  }
}

async function benchChanges(): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), "portico-bench-changes-"));
  const { cluster, images } = await startClusterWithPortico({
    dir: join(dir, "cluster"),
    pool: { name: "bench", addresses: [POOL] },
  });
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const context = describeCluster(cluster, images, POOL);
    const ns = await E2eNamespace.create(context, "bench");
    const measuring = Object.keys(changes).filter(
      (name) => !CHANGES || CHANGES.some((c) => name.includes(c)),
    );
    const bgp = measuring.some((name) => changes[name]!.bgp)
      ? await startBgpMode(ns, join(dir, "router"), cleanups)
      : undefined;
    await ns.deployEcho("echo", 3, { spread: true, drainSeconds: DRAIN_S });
    await ns.createLoadBalancer("web", "echo");
    await ns.createLoadBalancer("web-local", "echo", { externalTrafficPolicy: "Local" });
    if (bgp) await ns.createLoadBalancer("web-bgp", "echo", {}, { "portico.io/address-pool": bgp.pool });
    const addresses: Record<string, string> = {
      web: await ns.waitForAddress("web"),
      "web-local": await ns.waitForAddress("web-local"),
      ...(bgp ? { "web-bgp": await ns.waitForAddress("web-bgp") } : {}),
    };
    await ns.waitAvailable("echo");
    const figures: Record<string, unknown> = {
      "client load":
        "new connections: one HTTP request every 50 ms, 1 s timeout; long-lived: 10 kept-alive connections, " +
        "a request on each every 500 ms, 2 s timeout",
      workload:
        `3 pods spread over 3 nodes, serving ${DRAIN_S} s past SIGTERM; metal overlay, L2 (the LAN's client); ` +
        "BGP rows: a router peering with every node, ECMP hashed on ports, the client behind it",
    };
    // A change left out keeps its figures of the last run, said to be from then.
    const previous = JSON.parse(
      await readFile(join(import.meta.dirname, "results", "cluster-changes.json"), "utf8").catch(() => "{}"),
    ) as Record<string, Record<string, unknown> | undefined>;
    for (const [name, measured] of Object.entries(changes)) {
      if (CHANGES && !CHANGES.some((c) => name.includes(c))) {
        const before = previous[name];
        if (before)
          figures[name] = {
            "measured in the run of": before["measured in the run of"] ?? previous.date,
            ...before,
          };
        continue;
      }
      const rows = [];
      for (let i = 0; i < TRIALS; i++) {
        await clusterSettled(context);
        const address = addresses[measured.service]!;
        if (measured.bgp) await bgp!.routedOverEveryNode(address);
        else await steadyAnnouncer(context, address);
        const row = await trial(ns, address, measured, measured.bgp ? bgp!.behind : context);
        console.error(`${name}, trial ${i + 1}: ${JSON.stringify(row)}`);
        rows.push(row);
      }
      figures[name] = {
        trials: rows.length,
        "new connections: failed requests": rows.map((r) => r.fresh.failed),
        "new connections: requests sent": rows.map((r) => r.fresh.total),
        "new connections: longest stretch without an answer, ms": rows.map((r) => r.fresh.longestMs),
        "long-lived connections cut (of 10 and their replacements)": rows.map((r) => r.held.cut),
        "long-lived connections ended by the server and reopened": rows.map(
          (r) => r.held.replaced - r.held.cut,
        ),
        "long-lived: failed requests": rows.map((r) => r.held.failed),
        "long-lived: requests sent": rows.map((r) => r.held.requests),
        "change to steady load again, s": rows.map((r) => r.seconds),
      };
    }
    return figures;
  } finally {
    for (const undo of cleanups.reverse()) await undo().catch(() => undefined);
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await report("cluster-changes", benchChanges);
