// `make bench-cluster`. Portico as users run it, on the local cluster (three kubelet nodes, Portico's image
// from the Dockerfile, the metal overlay): how long the set-up takes (image build, cluster start, rollout),
// and what a client on the LAN sees when the node announcing a Service's address is lost — its cable pulled,
// or its power cut — how long no request gets through, and when the last one fails, over BENCH_TRIALS trials
// of each.
import { mkdtemp, rm } from "node:fs/promises";
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
const LOSSES: Loss[] = ["link", "power"];

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
    const address = await ns.waitForAddress("web");
    await ns.waitAvailable("echo");
    const load = new ClientLoad(context, `http://${address}/`, { intervalMs: 50, timeoutMs: 500 });
    const trials: Record<Loss, NodeLossMeasurement[]> = { link: [], power: [] };
    try {
      await load.waitSteady();
      for (const loss of LOSSES)
        for (let i = 0; i < TRIALS; i++) {
          const m = await cutAnnouncer(context, address, load, OBSERVE_MS, loss);
          console.error(`${loss} trial ${i + 1}: ${JSON.stringify(m)}`);
          trials[loss].push(m);
          await clusterSettled(context);
          await load.waitSteady(20);
        }
    } finally {
      await load.stop();
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
    return {
      setup: {
        "total seconds": setupSeconds,
        "image build seconds (this run; 0 = cached)": images.seconds,
        "images step seconds": seconds.images,
        "cluster start seconds (3 nodes Ready, images imported)": seconds.cluster,
        "Portico rollout seconds (overlay applied to controller + speakers ready)": seconds.install,
      },
      "client load":
        "one HTTP request every 50 ms on a new connection, 500 ms timeout, 3 pods on 3 nodes, Cluster",
      "announcing node's cable pulled at the switch": figures(trials.link),
      "announcing node's power cut (cable pulled, every process killed; then booted again)": figures(
        trials.power,
      ),
    };
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await report("cluster", benchCluster);
