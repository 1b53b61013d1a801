// The harness's own failure modes: each must end in one line that names what is wrong and how to fix it,
// and nothing it started may outlive the process that started it.
import { execFile, spawn } from "node:child_process";
import { symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { EnvironmentError } from "../harness/errors.ts";
import { assertPortFree } from "../harness/ports.ts";
import { ManagedProcess } from "../harness/processes.ts";
import { waitFor } from "../harness/wait.ts";
import { testTempDir } from "../harness/tempDir.ts";

const SETUP = join(import.meta.dirname, "..", "env", "setup.sh");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A PATH holding only the basic tools setup.sh uses, so Go and Python look absent. */
async function barePath(): Promise<string> {
  const dir = testTempDir("portico-path-");
  for (const tool of [
    "bash",
    "cat",
    "sha256sum",
    "cut",
    "awk",
    "head",
    "mkdir",
    "rm",
    "mv",
    "touch",
    "dirname",
  ]) {
    await symlink(`/usr/bin/${tool}`, join(dir, tool));
  }
  return dir;
}

async function runSetup(part: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  try {
    await promisify(execFile)(SETUP, [part], { env });
    return { code: 0, stderr: "" };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe("set-up failures are one line", () => {
  test("without Go, building the control plane fails naming Go and how to install it", async () => {
    const cache = testTempDir("portico-cache-");
    const { code, stderr } = await runSetup("cluster", { PATH: await barePath(), PORTICO_CACHE: cache });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^portico: Go is not installed.*install Go/),
    ]);
  });

  test("without Python, the AWS emulator fails naming Python and how to install it", async () => {
    const cache = testTempDir("portico-cache-");
    const { code, stderr } = await runSetup("moto", { PATH: await barePath(), PORTICO_CACHE: cache });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^portico: Python 3 is not installed.*apt-get install/),
    ]);
  });

  test("a port that is taken is named", async () => {
    const server = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const port = (server.address() as { port: number }).port;
    const failure = assertPortFree(port, "the AWS emulator");
    await expect(failure).rejects.toThrow(EnvironmentError);
    await expect(failure).rejects.toThrow(`port ${port} for the AWS emulator is already in use`);
    server.close();
  });

  test("a missing program is named with the command that builds it", () => {
    expect(() => ManagedProcess.start("etcd", "/nonexistent/etcd", [], "/dev/null")).toThrow(
      "etcd: /nonexistent/etcd does not exist (run make test once to build it)",
    );
  });

  test("a program that dies during start-up is reported with the end of its log, not a hang", async () => {
    const dir = testTempDir("portico-proc-");
    const script = join(dir, "fails.sh");
    await writeFile(script, "#!/bin/sh\necho 'bind: address already in use'\nexit 3\n", { mode: 0o755 });
    const proc = ManagedProcess.start("kube-apiserver", script, [], join(dir, "log"));
    const error = await proc.waitReady(() => Promise.resolve(false), 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvironmentError);
    expect((error as Error).message).toMatch(
      /^kube-apiserver exited during start-up \(log .*\): bind: address already in use$/,
    );
    expect((error as Error).stack).not.toContain("\n");
  });
});

test("processes the harness starts die with the process that started them, even on SIGKILL", async () => {
  // A stand-in test runner: starts a long-lived process through the harness, reports its pid, waits.
  const runner = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { ManagedProcess } from ${JSON.stringify(join(import.meta.dirname, "..", "harness", "processes.ts"))};
       const p = ManagedProcess.start("sleeper", "/usr/bin/sleep", ["300"], "/dev/null");
       console.log(p.pid);
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const pid = await new Promise<number>((resolve) =>
    runner.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim()))),
  );
  expect(alive(pid)).toBe(true);
  runner.kill("SIGKILL");
  await waitFor(`process ${pid} to be gone after its parent was killed`, () => !alive(pid), {
    timeoutMs: 5000,
  });
});
