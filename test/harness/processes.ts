import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, openSync, closeSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { EnvironmentError } from "./errors.ts";

/**
 * A long-running helper process (etcd, kube-apiserver, moto, an emulator) whose output goes to a log file.
 * It is started under `setpriv --pdeathsig KILL`, so the kernel kills it when the process that started it
 * dies for any reason, even SIGKILL: an interrupted test run leaves nothing behind.
 */
export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  private constructor(name: string, logFile: string, child: ChildProcess) {
    this.name = name;
    this.logFile = logFile;
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      });
    });
  }

  static start(
    name: string,
    command: string,
    args: string[],
    logFile: string,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    if (!existsSync(command))
      throw new EnvironmentError(`${name}: ${command} does not exist (run make test once to build it)`);
    const fd = openSync(logFile, "a");
    const [file, argv] = existsSync(SETPRIV)
      ? [SETPRIV, ["--pdeathsig", "KILL", "--", command, ...args]]
      : [command, args];
    const child = spawn(file, argv, { stdio: ["ignore", fd, fd], env });
    closeSync(fd);
    return new ManagedProcess(name, logFile, child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** Last lines of the log, for error messages that show why a process failed. */
  tail(lines = 5): string {
    try {
      return readFileSync(this.logFile, "utf8").trimEnd().split("\n").slice(-lines).join(" | ");
    } catch {
      return "";
    }
  }

  /** Polls `ready` until it returns true; fails at once if the process exits, or after `timeoutMs`. */
  async waitReady(ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new EnvironmentError(
          `${this.name} exited during start-up (log ${this.logFile}): ${this.tail()}`,
        );
      }
      if (await ready().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new EnvironmentError(
      `${this.name} was not ready after ${timeoutMs / 1000}s (log ${this.logFile}): ${this.tail()}`,
    );
  }

  /** SIGTERM, then SIGKILL if it has not gone after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kill without grace, as a crash would. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGKILL");
    await this.exited;
  }
}

const SETPRIV = "/usr/bin/setpriv";

/** Resident memory and CPU seconds (user + system) a process has used so far, from /proc. */
export async function processUsage(pid: number): Promise<{ rssBytes: number; cpuSeconds: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  // utime and stime, in clock ticks of 1/100 s, after the command name (which may hold spaces).
  const stat = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return { rssBytes: rssKb * 1024, cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100 };
}
