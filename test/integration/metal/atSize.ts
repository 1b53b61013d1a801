// The speakers at size, for the benchmark: many more Services (each with its own address and a ready endpoint)
// and Nodes without a speaker (as on a cluster where most nodes are not in this LAN), then every speaker's
// resident memory and CPU once all addresses are announced and nothing changes.
import { processUsage } from "../../harness/processes.ts";
import { waitFor } from "../../harness/wait.ts";
import { metricSum, speakerMetrics } from "./clients.ts";
import type { MetalCluster } from "./speakers.ts";

const BATCH = 10;
const ATTEMPTS = 3;

/**
 * `make(i, attempt)` for every i, BATCH at a time. The apiserver sometimes closes a connection under this
 * burst; an item is then made again under a new name (what failed may half exist).
 */
async function inBatches(count: number, make: (i: number, attempt: number) => Promise<unknown>) {
  const withRetry = async (i: number) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await make(i, attempt);
      } catch (err) {
        if (attempt + 1 >= ATTEMPTS) throw err;
      }
    }
  };
  for (let start = 0; start < count; start += BATCH)
    await Promise.all(Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => withRetry(start + k)));
}

export async function measureAtSize(
  metal: MetalCluster,
  size: { services: number; nodes: number },
  pidOf: (node: MetalCluster["nodes"][number]) => number,
) {
  const started = Date.now();
  // Addresses from 198.18.0.0/15 (set aside for benchmarks), one per Service; Nodes' from the other half.
  await inBatches(size.nodes, (i, attempt) =>
    metal.cluster.createNode(`idle${i}-${attempt}`, { internalIP: `198.19.${i >> 8}.${i & 255}` }),
  );
  const before = metal.nodes.reduce((sum, n) => sum + n.owned.length, 0);
  await inBatches(size.services, (i, attempt) =>
    metal.createService(`size${i}-${attempt}`, [`198.18.${i >> 8}.${i & 255}`], {
      endpointNodes: [metal.nodes[i % metal.nodes.length]!],
    }),
  );
  await waitFor(
    `the speakers to announce all ${size.services} new addresses`,
    () => metal.nodes.reduce((sum, n) => sum + n.owned.length, 0) >= before + size.services,
    { timeoutMs: 300_000, intervalMs: 500 },
  );
  const announcedAfterSeconds = Math.round((Date.now() - started) / 1000);
  // The takeover bursts, records and Events are done before the idle figures.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const pids = metal.nodes.map(pidOf);
  const cpuBefore = await Promise.all(pids.map(async (pid) => (await processUsage(pid)).cpuSeconds));
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const after = await Promise.all(pids.map((pid) => processUsage(pid)));
  const seconds = (performance.now() - t0) / 1000;
  // What the memory is: V8's heap in use and as held from the system, and memory outside it (buffers).
  const metrics = await Promise.all(metal.nodes.map((n) => speakerMetrics(n.host)));
  const mib = (name: string) => metrics.map((m) => Math.round(metricSum(m, name) / 2 ** 20)).join(" ");
  return {
    services: size.services,
    extraNodes: size.nodes,
    announcedAfterSeconds,
    idleRssMiB: after.map((u) => Math.round(u.rssBytes / 2 ** 20)).join(" "),
    idleCpuShare: after
      .map((u, i) => `${((100 * (u.cpuSeconds - cpuBefore[i]!)) / seconds).toFixed(1)}%`)
      .join(" "),
    heapUsedMiB: mib("nodejs_heap_size_used_bytes"),
    heapTotalMiB: mib("nodejs_heap_size_total_bytes"),
    externalMiB: mib("nodejs_external_memory_bytes"),
  };
}
