// A benchmark's handle on long-lived connections from the LAN's client (longLivedClient.ts): what a rollout,
// a drain or an upgrade does to connections already open, beside ClientLoad's new connections.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { E2eContext } from "./e2eSetup.ts";
import { IP } from "./netns.ts";
import { waitFor } from "./wait.ts";

/** One request on a long-lived connection. */
export interface HeldRequest {
  start: number;
  ms: number;
  slot: number;
  /** The TCP connection that carried it (numbered by the client). */
  conn: number;
  /** Whether that connection had carried a request before. */
  reused: boolean;
  ok: boolean;
  pod?: string;
  error?: string;
}

export interface ConnectionOutcomes {
  requests: number;
  failed: number;
  /** Connections that failed a request after carrying one before: cut under the client. */
  cut: number;
  /** Connections opened after the first per slot: each a connection that ended (properly or cut) and was replaced. */
  replaced: number;
}

/** What happened to the long-lived connections, from the client's lines. */
export function connectionOutcomes(results: readonly HeldRequest[]): ConnectionOutcomes {
  const cut = new Set(results.filter((r) => !r.ok && r.reused).map((r) => r.conn));
  const conns = new Set(results.filter((r) => r.conn > 0).map((r) => r.conn));
  const slots = new Set(results.map((r) => r.slot));
  return {
    requests: results.length,
    failed: results.filter((r) => !r.ok).length,
    cut: cut.size,
    replaced: Math.max(0, conns.size - slots.size),
  };
}

const CLIENT = join(import.meta.dirname, "longLivedClient.ts");

export class LongLivedLoad {
  readonly results: HeldRequest[] = [];
  private readonly child: ChildProcess;
  private readonly closed: Promise<void>;

  constructor(
    context: E2eContext,
    url: string,
    opts: { connections?: number; intervalMs?: number; timeoutMs?: number } = {},
  ) {
    const args = [
      String(opts.connections ?? 10),
      String(opts.intervalMs ?? 500),
      String(opts.timeoutMs ?? 2000),
    ];
    const argv = ["netns", "exec", context.client.namespace, process.execPath, CLIENT, url, ...args];
    this.child = spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", IP, ...argv], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      this.results.push(JSON.parse(line) as HeldRequest);
    });
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
  }

  /** Waits until every connection has carried `count` answered requests in a row. */
  async waitSteady(connections = 10, count = 3, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `${count} answered requests in a row on each of ${connections} connections`,
      () => {
        for (let slot = 0; slot < connections; slot++) {
          const last = this.results.filter((r) => r.slot === slot).slice(-count);
          if (last.length < count || !last.every((r) => r.ok)) return undefined;
        }
        return true;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** Stops sending, lets the requests in flight finish, and returns every result. */
  async stop(): Promise<HeldRequest[]> {
    this.child.kill("SIGTERM");
    await this.closed;
    return this.results;
  }
}
