// The set-up's Debian packages go in through test/env/apt.sh, which waits for another apt or dpkg to finish with
// apt's locks instead of failing on them (as apt-get does at once without DPkg::Lock::Timeout, and `apt-get update`
// does on its lists' lock even with it). Another program holds the real locks here, as python-apt programs such as
// unattended-upgrades do (fcntl locks on the same files), and lets go after a few seconds. Root, as the set-up.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";

const APT = join(import.meta.dirname, "..", "..", "env", "apt.sh");
const HOLD_S = 4;
const holders: ChildProcess[] = [];

afterEach(() => {
  for (const h of holders.splice(0)) h.kill("SIGKILL");
});

/** Takes apt's locks at `paths` as apt and dpkg take them, holds them for `seconds`, then lets go. */
async function holdLocks(paths: string[], seconds: number): Promise<void> {
  const script =
    "import fcntl, os, sys, time\n" +
    "fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o640) for p in sys.argv[2:]]\n" +
    "for fd in fds: fcntl.lockf(fd, fcntl.LOCK_EX)\n" +
    "print('held', flush=True)\n" +
    "time.sleep(float(sys.argv[1]))\n";
  const child = spawn("python3", ["-c", script, String(seconds), ...paths], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    child.once("exit", (code) =>
      reject(new Error(`the lock holder exited with ${code} before taking the locks`)),
    );
  });
}

/** Runs test/env/apt.sh with apt-get's arguments: its exit code, terminal output, seconds taken and log. */
async function apt(
  ...args: string[]
): Promise<{ code: number; stderr: string; seconds: number; log: string }> {
  const dir = await mkdtemp(join(tmpdir(), "portico-apt-"));
  const log = join(dir, "apt.log");
  const started = Date.now();
  const child = spawn(APT, [log, ...args], { stdio: ["ignore", "inherit", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number>((resolve) => child.once("close", (c) => resolve(c ?? -1)));
  const seconds = (Date.now() - started) / 1000;
  const written = await readFile(log, "utf8").catch(() => "");
  await rm(dir, { recursive: true, force: true });
  return { code, stderr, seconds, log: written };
}

test("apt-get install waits for the program holding dpkg's locks, and says once who it waits for", async () => {
  await holdLocks(["/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock"], HOLD_S);
  // bash is always installed: with --no-upgrade apt-get takes the locks and then changes nothing.
  const run = await apt("install", "--no-upgrade", "-y", "-qq", "bash");
  expect(run.code, run.log).toBe(0);
  expect(run.stderr).toMatch(/^portico: waiting for python3 \(process \d+\) to finish with apt's lock/);
  expect(run.stderr.trim().split("\n")).toHaveLength(1);
  expect(run.seconds).toBeGreaterThan(HOLD_S - 1.5);
}, 120_000);

test("apt-get update waits for the program holding the package lists' lock", async () => {
  await holdLocks(["/var/lib/apt/lists/lock"], HOLD_S);
  const run = await apt("update", "-qq");
  expect(run.code, run.log).toBe(0);
  expect(run.stderr).toMatch(/^portico: waiting for python3 \(process \d+\) to finish with apt's lock/);
  expect(run.seconds).toBeGreaterThan(HOLD_S - 1.5);
}, 180_000);
