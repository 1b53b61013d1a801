// `make demo` as a user meets it (its emulator part: PORTICO_DEMO_CLUSTER=0 leaves the local cluster out): its
// first status tells the truth once it says the Services converged, and the lines it prints for another shell
// work as printed in a new shell that has only the machine's own programs — /usr/bin and /bin, whose Node.js, if
// any, is older than the one the demo runs on. Ctrl-C then stops it and removes its folder.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, test } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const execute = promisify(execFile);

/** Runs one printed line after the printed exports, in bash with nothing of this process's environment. */
async function inNewShell(
  exports: string[],
  line: string,
  home: string,
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await execute("/bin/bash", ["-c", [...exports, line].join("\n")], {
      env: { PATH: "/usr/bin:/bin", HOME: home },
      timeout: 60_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

test("the demo's status after converging, and its printed lines in a new shell; Ctrl-C leaves nothing behind", async () => {
  const demo = spawn(process.execPath, [join(ROOT, "test", "env", "demo.ts")], {
    env: { ...process.env, PORTICO_DEMO_CLUSTER: "0", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  demo.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  demo.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => demo.once("exit", (code) => resolve(code)));
  const home = await mkdtemp(join(tmpdir(), "portico-demo-home-"));
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        const check = () => (out.includes("Press Ctrl-C") ? resolve() : setTimeout(check, 200));
        check();
      }),
      exited.then((code) => {
        throw new Error(`the demo exited with ${code} before it was ready:\n${out}`);
      }),
    ]);
    const plain = out.replaceAll("\u001b[1m", "").replaceAll("\u001b[0m", "");

    // The first status comes once every NLB's Serving verdict has settled: no HealthChecksPending beside healthy
    // targets, and web-azure's NoLocalEndpoints is said to be meant.
    const status = plain.slice(
      plain.indexOf("== kubectl portico status"),
      plain.indexOf("== porticoctl doctor"),
    );
    expect(plain).toMatch(/converged in [\d.]+ s/);
    expect(status).toMatch(/\/web {2}aws {2}\S+ {2}Provisioned {2}TargetsHealthy/);
    expect(status).not.toContain("HealthChecksPending");
    expect(status).toMatch(/\/web-azure {2}azure .* NoLocalEndpoints/);
    expect(status).toContain("web-azure's NoLocalEndpoints is meant");

    const poke = plain.slice(plain.indexOf("== Poke at it"), plain.indexOf("Files and logs are in"));
    const lines = poke
      .split("\n")
      .slice(1)
      .map((l) => l.trim())
      .filter(Boolean);
    const exports = lines.filter((l) => l.startsWith("export "));
    const commands = lines.filter((l) => !l.startsWith("export "));
    const ns = /kubectl portico status -n (\S+)/.exec(poke)?.[1];
    expect(ns, poke).toBeDefined();
    expect(commands.map((c) => c.split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "kubectl portico",
      "porticoctl doctor",
      "kubectl -n",
      "kubectl -n",
    ]);

    const [statusLine, doctorLine, getLine, deleteLine] = commands as [string, string, string, string];
    const live = await inNewShell(exports, statusLine, home);
    expect(live.out).toMatch(new RegExp(`^${ns}/web {2}aws {2}\\S+ {2}Provisioned {2}TargetsHealthy`, "m"));
    expect(live.out).toMatch(/NLB k8s-\S+ internal active/);
    const doctor = await inNewShell(exports, doctorLine, home);
    expect(doctor.out).toMatch(/✓ cloud targets: \d+ of \d+ targets healthy/);
    expect(doctor.code, doctor.out).toBe(0);
    const services = await inNewShell(exports, getLine, home);
    expect(services.code, services.out).toBe(0);
    expect(services.out).toMatch(/^web-local\s+LoadBalancer/m);
    const deleted = await inNewShell(exports, deleteLine, home);
    expect(deleted.code, deleted.out).toBe(0);
    expect(deleted.out).toContain(`service "web" deleted`);

    const folder = /Files and logs are in (\S+?)\.? Press Ctrl-C/.exec(plain)?.[1];
    expect(folder, plain).toBeDefined();
    expect(existsSync(folder!)).toBe(true);
    demo.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(existsSync(folder!), `${folder} after the demo stopped`).toBe(false);
  } finally {
    demo.kill("SIGKILL");
    await rm(home, { recursive: true, force: true });
  }
}, 400_000);
