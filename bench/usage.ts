// What the benchmarks measure of processes: memory and CPU from /proc, sampled while a phase runs, and when a
// controller has settled.
import { total, type ControllerProcess } from "../test/harness/controllerProcess.ts";
import { sleep } from "./report.ts";

export { processUsage } from "../test/harness/processes.ts";

/** The controller's peak resident memory and the CPU it used while sampled (since it started, if `fromStart`). */
export function sampleUsage(controller: ControllerProcess, fromStart = false) {
  let peakRss = 0;
  const first = controller.usage();
  const tick = () =>
    controller
      .usage()
      .then((u) => (peakRss = Math.max(peakRss, u.rssBytes)))
      .catch(() => undefined);
  const timer = setInterval(() => void tick(), 250);
  return {
    async stop(): Promise<{ rssBytes: number; cpuSeconds: number }> {
      clearInterval(timer);
      await tick();
      const cpu = (await controller.usage()).cpuSeconds - (fromStart ? 0 : (await first).cpuSeconds);
      return { rssBytes: peakRss, cpuSeconds: cpu };
    },
  };
}

/**
 * Waits until the controller's queue is empty and neither a reconcile nor a cloud call has finished for two
 * seconds (a retry waiting out its backoff keeps the queue empty but is not done). Returns when the last one did.
 */
export async function settled(controller: ControllerProcess): Promise<number> {
  let last = "";
  let since = performance.now();
  while (performance.now() - since < 2000) {
    await sleep(250);
    const m = await controller.metrics();
    const now = `${total(m, "portico_reconciles_total")} ${total(m, "portico_cloud_calls_total")}`;
    if (now !== last || m.get("portico_workqueue_depth") !== 0) {
      last = now;
      since = performance.now();
    }
  }
  return since;
}
