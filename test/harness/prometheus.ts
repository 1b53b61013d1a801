// A real Prometheus (Debian's package) for the monitoring tests: started in a network namespace of the test's
// choosing (a node of the local cluster, from which pods and the speakers' host ports are reachable), scraping
// static targets every 2 s and evaluating Portico's alerting rules as often. Asked over its HTTP API from inside
// that namespace. Killed when the test ends; its data lives in a directory the caller removes.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { dump } from "js-yaml";
import { EnvironmentError } from "./errors.ts";
import { IP, LanProcess, sh } from "./netns.ts";
import { waitFor } from "./wait.ts";

export const PROMETHEUS = "/usr/bin/prometheus";
const PORT = 9090;

export interface ScrapeJob {
  /** The job's name, as a PodMonitor would name it (<namespace>/<name>). */
  readonly job: string;
  readonly targets: readonly string[];
  /** Labels the PodMonitor's relabelings put on every target (portico_component). */
  readonly labels: Record<string, string>;
}

export interface PromSample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: "pending" | "firing";
}

export class TestPrometheus {
  private readonly namespace: string;

  private constructor(namespace: string) {
    this.namespace = namespace;
  }

  static async start(
    namespace: string,
    dir: string,
    jobs: readonly ScrapeJob[],
    ruleFiles: readonly string[],
    onCleanup: (fn: () => Promise<void>) => void,
  ): Promise<TestPrometheus> {
    const config = {
      global: { scrape_interval: "2s", evaluation_interval: "2s", scrape_timeout: "1s" },
      rule_files: ruleFiles,
      scrape_configs: jobs.map((j) => ({
        job_name: j.job,
        static_configs: [{ targets: j.targets, labels: j.labels }],
      })),
    };
    const file = join(dir, "prometheus.yml");
    await writeFile(file, dump(config));
    const process = new LanProcess(
      "prometheus",
      join(dir, "prometheus.log"),
      namespace,
      PROMETHEUS,
      [
        `--config.file=${file}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${PORT}`,
      ],
      {},
    );
    onCleanup(() => process.kill());
    const prometheus = new TestPrometheus(namespace);
    await waitFor("Prometheus to answer", async () => {
      if (!process.running) throw new EnvironmentError(`Prometheus exited: ${process.tail()}`);
      return (await prometheus.get("/-/ready").catch(() => undefined)) !== undefined || undefined;
    });
    return prometheus;
  }

  /** An instant query's samples. */
  async query(expr: string): Promise<PromSample[]> {
    const body = await this.get(`/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (JSON.parse(body) as { data: { result: PromSample[] } }).data.result;
  }

  /** The alerts pending or firing now. */
  async alerts(): Promise<PromAlert[]> {
    return (JSON.parse(await this.get("/api/v1/alerts")) as { data: { alerts: PromAlert[] } }).data.alerts;
  }

  private get(path: string): Promise<string> {
    const url = `http://127.0.0.1:${PORT}${path}`;
    return sh(IP, ["netns", "exec", this.namespace, "curl", "-sf", "-m", "5", url], 10_000);
  }
}
