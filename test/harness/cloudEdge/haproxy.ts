// HAProxy as the emulated load balancers' health checker, run in the edge: its configuration is replaced and
// reloaded in place (haproxyProcess.ts) when target groups change, keeping what it already knows of each target
// (its server-state file); its verdicts are read from its runtime API over a Unix socket.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EdgeHost } from "./edgeHost.ts";
import { HaproxyProcess } from "./haproxyProcess.ts";
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
  private readonly haproxy: HaproxyProcess;
  private config = "";
  /** Targets (stateKey) that have passed a check since they were registered: they fail as unhealthy, not initial. */
  private readonly everUp = new Set<string>();

  constructor(edge: EdgeHost, dir: string) {
    this.haproxy = new HaproxyProcess(edge, dir, "haproxy");
    this.socket = this.haproxy.socket;
    this.stateFile = join(dir, "haproxy.state");
  }

  /**
   * Applies a configuration (haproxyConfig); servers it had not checked before start down, so they pass their
   * healthy threshold before they count, as ELBv2's new targets do. Returns whether anything changed.
   */
  private async apply(config: string): Promise<boolean> {
    if (config === this.config) return false;
    const known = serversOf(this.config);
    // What the old worker knows of each server, for the new one to load (the configuration names the file).
    if (this.haproxy.running)
      await writeFile(this.stateFile, await this.haproxy.command("show servers state"));
    await this.haproxy.load(config);
    this.config = config;
    // Servers new to this configuration start down (HAProxy would assume them up); the others keep the state the
    // new worker loaded from the old one's.
    for (const server of serversOf(config))
      if (!known.has(server)) await this.haproxy.command(`set server ${server} health down`);
    return true;
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
    return parseStat(await this.haproxy.command("show stat"));
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
