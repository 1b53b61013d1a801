// Other work that saturates the machine's CPUs, for the tests and the benchmark that check the speakers tell a
// slow node from a dead one: busy-loop processes at normal priority in the root namespace, nothing more (no
// change to the network, to priorities or to sysctls). Each runs under `setpriv --pdeathsig KILL`, and they
// are killed on stop(), on this process's exit and, through pdeathsig, when this process dies any other way,
// so an interrupted run never leaves the machine saturated.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus } from "node:os";

const SETPRIV = "/usr/bin/setpriv";
/** A loop of shell builtins: all user time, no system calls, a few hundred KiB each. */
const LOOP = ["/bin/sh", "-c", "while :; do :; done"];

export interface CpuHogs {
  readonly count: number;
  /** Kills every hog and waits until each is gone. */
  stop(): Promise<void>;
}

/**
 * How many hogs saturate this machine: four per core, so that every core stays busy as the hogs migrate and a
 * process that wakes up finds several others ahead of it for its core.
 */
export function hogsToSaturate(): number {
  return 4 * cpus().length;
}

export function startCpuHogs(count = hogsToSaturate()): CpuHogs {
  const children: ChildProcess[] = [];
  const killAll = () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.on("exit", killAll);
  for (let i = 0; i < count; i++) {
    const [file, args] = existsSync(SETPRIV)
      ? [SETPRIV, ["--pdeathsig", "KILL", "--", ...LOOP]]
      : [LOOP[0]!, LOOP.slice(1)];
    children.push(spawn(file, args, { stdio: "ignore" }));
  }
  return {
    count,
    async stop() {
      const exited = children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) resolve();
            else child.once("exit", () => resolve());
          }),
      );
      killAll();
      await Promise.all(exited);
      process.off("exit", killAll);
    },
  };
}
