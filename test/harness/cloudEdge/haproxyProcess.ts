// One HAProxy in the edge, in master-worker mode: started with its first configuration, then reloaded in place
// (SIGUSR2) with each new one, so connections open on the old worker finish there; a configuration counts as applied
// once a worker other than the old one answers on the runtime API's Unix socket (it has bound its addresses by then).
import { writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { EdgeHost } from "./edgeHost.ts";

export class HaproxyProcess {
  /** The runtime API's socket: the configuration must declare it (`stats socket <it> ... level admin`). */
  readonly socket: string;
  private readonly configFile: string;
  private readonly logFile: string;
  private pid: number | undefined;
  private readonly edge: EdgeHost;
  private readonly name: string;

  constructor(edge: EdgeHost, dir: string, name: string) {
    this.edge = edge;
    this.name = name;
    this.socket = join(dir, `${name}.sock`);
    this.configFile = join(dir, `${name}.cfg`);
    this.logFile = join(dir, `${name}.log`);
  }

  get running(): boolean {
    return this.pid !== undefined;
  }

  /** Checks the configuration, then starts HAProxy with it or reloads it; resolves once the new worker answers. */
  async load(config: string): Promise<void> {
    await writeFile(this.configFile, config);
    await this.edge.exec("haproxy", ["-c", "-q", "-f", this.configFile]);
    const before = this.pid === undefined ? undefined : await this.workerPid();
    if (this.pid === undefined) {
      const proc = this.edge.start(this.name, this.logFile, "haproxy", ["-W", "-db", "-f", this.configFile]);
      this.pid = proc.pid;
    } else process.kill(this.pid, "SIGUSR2");
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = await this.workerPid().catch(() => undefined);
      if (now !== undefined && now !== before) return;
      if (Date.now() > deadline)
        throw new Error(`${this.name}: HAProxy's new worker did not answer within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** One command on the runtime API; resolves to its answer. */
  command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const conn = createConnection(this.socket);
      let out = "";
      conn.on("data", (d) => (out += d.toString()));
      conn.once("error", reject);
      conn.once("end", () => resolve(out));
      conn.write(`${line}\n`);
    });
  }

  private async workerPid(): Promise<string | undefined> {
    return /^Pid: (\d+)$/m.exec(await this.command("show info"))?.[1];
  }
}
