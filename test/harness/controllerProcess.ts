// Portico's controller as a separate process, exactly as it runs in a cluster (its own binary, flags and
// environment), so tests can kill it with SIGKILL at any moment and benchmarks can measure its memory and CPU.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { ManagedProcess, processUsage } from "./processes.ts";
import { waitFor } from "./wait.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const MAIN = join(ROOT, "controller", "main.ts");

/** The heap bound the controller's Deployment sets, so what is measured here is what runs in a cluster. */
const DEPLOYED_HEAP = /--max-old-space-size=\d+/.exec(
  readFileSync(join(ROOT, "manifests", "base", "controller-deployment.yaml"), "utf8"),
)![0];

/** The flags that confine a controller to one test cluster's namespace and Nodes, naming the cluster after it. */
export function scopedTo(cluster: { namespace: string; nodeSelector: string }): string[] {
  return [
    "--cluster-name",
    cluster.namespace,
    "--namespace",
    cluster.namespace,
    "--node-selector",
    cluster.nodeSelector,
  ];
}

export interface ControllerProcessOptions {
  kubeconfig: string;
  args: string[];
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** The entry point to run: controller/main.ts unless given (e.g. a build's dist/controller/main.js). */
  main?: string;
}

export class ControllerProcess {
  readonly metricsUrl: string;
  private readonly proc: ManagedProcess;

  private constructor(proc: ManagedProcess, metricsUrl: string) {
    this.proc = proc;
    this.metricsUrl = metricsUrl;
  }

  static async start(opts: ControllerProcessOptions): Promise<ControllerProcess> {
    const port = await freePort();
    const proc = ManagedProcess.start(
      "portico-controller",
      process.execPath,
      [
        opts.main ?? MAIN,
        "--kubeconfig",
        opts.kubeconfig,
        "--metrics-address",
        `127.0.0.1:${port}`,
        ...opts.args,
      ],
      opts.logFile,
      {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${DEPLOYED_HEAP}`.trim(),
        PORTICO_LOG_LEVEL: "info",
        ...opts.env,
      },
    );
    const controller = new ControllerProcess(proc, `http://127.0.0.1:${port}`);
    await proc.waitReady(async () => (await fetch(`${controller.metricsUrl}/readyz`)).ok, 60_000);
    return controller;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  /** As a crash would: no cleanup, no Lease released. */
  kill(): Promise<void> {
    return this.proc.kill();
  }

  stop(): Promise<void> {
    return this.proc.stop();
  }

  /** The controller's Prometheus metrics, as name{labels} → value. */
  async metrics(): Promise<Map<string, number>> {
    const text = await (await fetch(`${this.metricsUrl}/metrics`)).text();
    const out = new Map<string, number>();
    for (const line of text.split("\n")) {
      const m = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
      if (m) out.set(m[1]!, Number(m[2]));
    }
    return out;
  }

  /** Resident memory in bytes and CPU seconds used so far, from /proc. */
  usage(): Promise<{ rssBytes: number; cpuSeconds: number }> {
    return processUsage(this.pid);
  }

  async waitQueueEmpty(timeoutMs = 60_000): Promise<void> {
    await waitFor(
      "the controller's work queue to empty",
      async () => (await this.metrics()).get("portico_workqueue_depth") === 0,
      { timeoutMs, intervalMs: 200 },
    );
  }
}

/** Sum of a counter over all label sets, optionally only those whose labels match. */
export function total(metrics: Map<string, number>, name: string, labels?: RegExp): number {
  let sum = 0;
  for (const [key, value] of metrics)
    if (key.startsWith(`${name}{`) || key === name) if (!labels || labels.test(key)) sum += value;
  return sum;
}
