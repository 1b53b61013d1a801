// A test's handle on one TCP connection held open from a client namespace (heldConnectionClient.ts): requests on
// that connection only, so what a load balancer does to an established flow (keeps it while draining, cuts it)
// is seen directly.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { IP } from "./netns.ts";

export type HeldAnswer = { ok: true; pod: string } | { ok: false; error: string };

const CLIENT = join(import.meta.dirname, "heldConnectionClient.ts");

export class HeldConnection {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;

  private constructor(namespace: string, address: string, port: number) {
    this.child = spawn(
      "/usr/bin/setpriv",
      [
        "--pdeathsig",
        "KILL",
        "--",
        IP,
        "netns",
        "exec",
        namespace,
        process.execPath,
        CLIENT,
        address,
        String(port),
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      this.lines.push(line);
      this.wake?.();
    });
  }

  /** Connects from `namespace` to `address`:`port`; rejects when the connection cannot be made. */
  static async open(namespace: string, address: string, port: number): Promise<HeldConnection> {
    const held = new HeldConnection(namespace, address, port);
    const first = JSON.parse(await held.next()) as { connected?: boolean; ok?: boolean; error?: string };
    if (!first.connected) {
      held.close();
      throw new Error(`no connection to ${address}:${port}: ${first.error}`);
    }
    return held;
  }

  /** One GET on the held connection. */
  async get(): Promise<HeldAnswer> {
    this.child.stdin!.write("GET\n");
    return JSON.parse(await this.next()) as HeldAnswer;
  }

  close(): void {
    this.child.kill("SIGKILL");
  }

  private async next(): Promise<string> {
    while (!this.lines.length) {
      const exited = this.child.exitCode !== null;
      if (exited) return JSON.stringify({ ok: false, error: `client exited ${this.child.exitCode}` });
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
    return this.lines.shift()!;
  }
}
