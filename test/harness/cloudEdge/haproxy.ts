// HAProxy as the emulated load balancers' health checker, run in the edge: its configuration is replaced and
// reloaded in place (master-worker, SIGUSR2) when target groups change, keeping what it already knows of each
// target (its server-state file); its verdicts are read from its runtime API over a Unix socket.
import { writeFile } from "node:fs/promises";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { EdgeHost } from "./edgeHost.ts";
import {
  backendName,
  haproxyConfig,
  parseStat,
  serverName,
  stateKey,
  targetState,
  type CheckedGroup,
  type ServerStat,
  type TargetState,
} from "./checkPlan.ts";

export class HealthChecker {
  readonly socket: string;
  readonly stateFile: string;
  private readonly configFile: string;
  private config = "";
  private pid: number | undefined;
  /** Targets (stateKey) that have passed a check since they were registered: they fail as unhealthy, not initial. */
  private readonly everUp = new Set<string>();

  private readonly edge: EdgeHost;
  private readonly dir: string;

  constructor(edge: EdgeHost, dir: string) {
    this.edge = edge;
    this.dir = dir;
    this.socket = join(dir, "haproxy.sock");
    this.stateFile = join(dir, "haproxy.state");
    this.configFile = join(dir, "haproxy.cfg");
  }

  /**
   * Applies a configuration (haproxyConfig); servers it had not checked before start down, so they pass their
   * healthy threshold before they count, as ELBv2's new targets do. Returns whether anything changed.
   */
  private async apply(config: string): Promise<boolean> {
    if (config === this.config) return false;
    const known = serversOf(this.config);
    if (this.pid !== undefined) await writeFile(this.stateFile, await this.command("show servers state"));
    await writeFile(this.configFile, config);
    await this.edge.exec("haproxy", ["-c", "-q", "-f", this.configFile]);
    const before = this.pid === undefined ? undefined : await this.workerPid();
    if (this.pid === undefined) {
      const proc = this.edge.start("haproxy", join(this.dir, "haproxy.log"), "haproxy", [
        "-W",
        "-db",
        "-f",
        this.configFile,
      ]);
      this.pid = proc.pid;
    } else process.kill(this.pid, "SIGUSR2");
    this.config = config;
    // The runtime API is the new worker's once it answers with another process ID than the old one did.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const now = await this.workerPid().catch(() => undefined);
      if (now !== undefined && now !== before) break;
      if (Date.now() > deadline)
        throw new Error("HAProxy's new worker did not answer within 10 s of a reload");
      await new Promise((r) => setTimeout(r, 50));
    }
    // Servers new to this configuration start down (HAProxy would assume them up); the others keep the state the
    // new worker loaded from the old one's.
    for (const server of serversOf(config))
      if (!known.has(server)) await this.command(`set server ${server} health down`);
    return true;
  }

  private async workerPid(): Promise<string | undefined> {
    return /^Pid: (\d+)$/m.exec(await this.command("show info"))?.[1];
  }

  /** Checks these groups from now on; resolves to every target's state (by stateKey) as the checks judge it. */
  async check(groups: readonly CheckedGroup[]): Promise<Map<string, TargetState>> {
    await this.apply(haproxyConfig(groups, this));
    const stats = new Map((await this.stats()).map((s) => [`${s.backend}/${s.server}`, s]));
    const states = new Map<string, TargetState>();
    for (const group of groups)
      for (const t of group.targets) {
        const key = stateKey(group.id, t);
        const stat = stats.get(`${backendName(group.id)}/${serverName(t)}`);
        if (stat?.status.startsWith("UP") && stat.checkStatus !== "INI") this.everUp.add(key);
        states.set(key, targetState(stat, this.everUp.has(key)));
      }
    return states;
  }

  async stats(): Promise<ServerStat[]> {
    return parseStat(await this.command("show stat"));
  }

  private command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const conn = createConnection(this.socket);
      let out = "";
      conn.on("data", (d) => (out += d.toString()));
      conn.once("error", reject);
      conn.once("end", () => resolve(out));
      conn.write(`${line}\n`);
    });
  }
}

/** `backend/server` of every server in a configuration (haproxyConfig's layout). */
function serversOf(config: string): Set<string> {
  const out = new Set<string>();
  let backend = "";
  for (const line of config.split("\n")) {
    const b = /^backend (\S+)/.exec(line);
    if (b) backend = b[1]!;
    const s = /^\s+server (\S+) /.exec(line);
    if (s) out.add(`${backend}/${s[1]}`);
  }
  return out;
}
