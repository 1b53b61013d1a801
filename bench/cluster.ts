// `make bench-cluster`. Portico as users run it, on the local cluster (three kubelet nodes, Portico's image
// from the Dockerfile, the metal overlay): how long the set-up takes (image build, cluster start, rollout),
// and what a client on the LAN sees when the node announcing a Service's address is lost — its cable pulled,
// or its power cut — how long no request gets through, and when the last one fails, over BENCH_TRIALS trials
// of each, behind an `externalTrafficPolicy: Cluster` Service and a `Local` one (announced only from nodes with a
// ready endpoint, so the lost node's pods are behind nobody else's kube-proxy).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeCluster, startClusterWithPortico } from "../test/harness/localCluster/install.ts";
import { ClientLoad, clusterSettled, E2eNamespace } from "../test/harness/localCluster/usage.ts";
import { servePowerControl } from "../test/harness/localCluster/nodeControl.ts";
import { cutAnnouncer, type Loss, type NodeLossMeasurement } from "../test/harness/nodeLoss.ts";
import { percentile, report } from "./report.ts";

const TRIALS = Number(process.env.BENCH_TRIALS ?? 10);
// Long enough for the node lifecycle controller to mark the lost node NotReady (20 s grace) and kube-proxy
// to drop its pods from the Service, which ends the failures a lost node causes.
const OBSERVE_MS = Number(process.env.BENCH_OBSERVE_MS ?? 45_000);
const POOL = "192.0.2.240/28";
/** Which losses to measure (link, power), and behind which traffic policies (Cluster, Local); default: all. */
const LOSSES = (process.env.BENCH_LOSSES?.split(",") ?? ["link", "power"]) as Loss[];
const POLICIES = (process.env.BENCH_POLICIES?.split(",") ?? ["Cluster", "Local"]) as Policy[];
type Policy = "Cluster" | "Local";
const TITLES: Record<Loss, string> = {
  link: "announcing node's cable pulled at the switch",
  power: "announcing node's power cut (cable pulled, every process killed; then booted again)",
};
const title = (loss: Loss, policy: Policy) => TITLES[loss] + (policy === "Local" ? ", Local" : "");

function summary(values: number[]): Record<string, number> {
  return {
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: Math.max(...values),
    min: Math.min(...values),
  };
}

async function benchCluster(): Promise<Record<string, unknown>> {
  const start = Date.now();
  const dir = await mkdtemp(join(tmpdir(), "portico-bench-cluster-"));
  const { cluster, images, seconds } = await startClusterWithPortico({
    dir: join(dir, "cluster"),
    pool: { name: "bench", addresses: [POOL] },
  });
  const setupSeconds = (Date.now() - start) / 1000;
  try {
    const powerSocket = join(dir, "power.sock");
    const power = await servePowerControl(powerSocket, cluster.nodes);
    const context = { ...describeCluster(cluster, images, POOL), powerSocket };
    const ns = await E2eNamespace.create(context, "bench");
    await ns.deployEcho("echo", 3, { spread: true });
    await ns.createLoadBalancer("web", "echo");
    await ns.createLoadBalancer("web-local", "echo", { externalTrafficPolicy: "Local" });
    const addresses: Record<Policy, string> = {
      Cluster: await ns.waitForAddress("web"),
      Local: await ns.waitForAddress("web-local"),
    };
    await ns.waitAvailable("echo");
    const trials = new Map<string, NodeLossMeasurement[]>();
    try {
      for (const policy of POLICIES) {
        const load = new ClientLoad(context, `http://${addresses[policy]}/`, {
          intervalMs: 50,
          timeoutMs: 500,
        });
        try {
          await load.waitSteady();
          for (const loss of LOSSES)
            for (let i = 0; i < TRIALS; i++) {
              const m = await cutAnnouncer(context, addresses[policy], load, OBSERVE_MS, loss);
              console.error(`${policy} ${loss} trial ${i + 1}: ${JSON.stringify(m)}`);
              trials.set(title(loss, policy), [...(trials.get(title(loss, policy)) ?? []), m]);
              await clusterSettled(context);
              await load.waitSteady(20);
            }
        } finally {
          await load.stop();
        }
      }
    } finally {
      power.close();
    }
    const figures = (list: NodeLossMeasurement[]) => ({
      trials: list.length,
      "client outage (cut to the first success after the first failure), ms": summary(
        list.map((t) => t.outageMs),
      ),
      "last failure after the cut, ms": summary(list.map((t) => t.lastFailureMs)),
      "failed requests per trial": summary(list.map((t) => t.failed)),
      rows: list.map((t) => ({
        node: t.node,
        outage: t.outageMs,
        last: t.lastFailureMs,
        failed: t.failed,
      })),
    });
    // A row left out keeps its figures of the last run, said to be from then.
    const previous = JSON.parse(
      await readFile(join(import.meta.dirname, "results", "cluster.json"), "utf8").catch(() => "{}"),
    ) as Record<string, Record<string, unknown> | undefined>;
    const rows: Record<string, unknown> = {};
    for (const policy of ["Cluster", "Local"] as Policy[])
      for (const loss of ["link", "power"] as Loss[]) {
        const name = title(loss, policy);
        const measured = trials.get(name);
        const before = previous[name];
        if (measured) rows[name] = figures(measured);
        else if (before)
          rows[name] = {
            "measured in the run of": before["measured in the run of"] ?? previous.date,
            ...before,
          };
      }
    return {
      setup: {
        "total seconds": setupSeconds,
        "image build seconds (this run; 0 = cached)": images.seconds,
        "images step seconds": seconds.images,
        "cluster start seconds (3 nodes Ready, images imported)": seconds.cluster,
        "Portico rollout seconds (overlay applied to controller + speakers ready)": seconds.install,
      },
      "client load":
        "one HTTP request every 50 ms on a new connection, 500 ms timeout, 3 pods on 3 nodes, Cluster (or Local)",
      ...rows,
    };
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await report("cluster", benchCluster);
