// The HAProxy that carries the NLB listeners the kernel cannot (proxyPlan.ts), run in the edge beside the health
// checker: started with the first such listener, its configuration replaced and reloaded in place (master-worker,
// SIGUSR2) when listeners or their targets change, so open connections finish on the old worker.
import { writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { EdgeHost } from "./edgeHost.ts";
import { proxyConfig, type ProxiedListener } from "./proxyPlan.ts";

export class ListenerProxy {
  private readonly socket: string;
  private readonly configFile: string;
  private config = "";
  private pid: number | undefined;

  private readonly edge: EdgeHost;
  private readonly dir: string;

  constructor(edge: EdgeHost, dir: string) {
    this.edge = edge;
    this.dir = dir;
    this.socket = join(dir, "proxy.sock");
    this.configFile = join(dir, "proxy.cfg");
  }

  /** Carries these listeners from now on (none: nothing runs until there is one). */
  async apply(listeners: readonly ProxiedListener[]): Promise<void> {
    const config = proxyConfig(listeners, { socket: this.socket });
    if (config === this.config || (!listeners.length && this.pid === undefined)) return;
    await writeFile(this.configFile, config);
    await this.edge.exec("haproxy", ["-c", "-q", "-f", this.configFile]);
    const before = this.pid === undefined ? undefined : await this.workerPid();
    if (this.pid === undefined) {
      const proc = this.edge.start("proxy", join(this.dir, "proxy.log"), "haproxy", [
        "-W",
        "-db",
        "-f",
        this.configFile,
      ]);
      this.pid = proc.pid;
    } else process.kill(this.pid, "SIGUSR2");
    this.config = config;
    // Applied once a worker other than the old one answers (it has bound the listeners' addresses by then).
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = await this.workerPid().catch(() => undefined);
      if (now !== undefined && now !== before) return;
      if (Date.now() > deadline)
        throw new Error("the listener proxy's new worker did not answer within 10 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async workerPid(): Promise<string | undefined> {
    const info = await new Promise<string>((resolve, reject) => {
      const conn = createConnection(this.socket);
      let out = "";
      conn.on("data", (d) => (out += d.toString()));
      conn.once("error", reject);
      conn.once("end", () => resolve(out));
      conn.write("show info\n");
    });
    return /^Pid: (\d+)$/m.exec(info)?.[1];
  }
}
