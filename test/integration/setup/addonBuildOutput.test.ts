// The set-up builds the speaker's packet-socket addon with one line on the terminal (make env passes
// PORTICO_BUILD_LOG): node-gyp's and the compiler's lines go to the log, whose end is shown only when the build fails.
// Built here from a copy of speaker/native/, so the repository's own build is left as it is.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, test } from "vitest";

const NATIVE = join(import.meta.dirname, "..", "..", "..", "speaker", "native");
const execute = promisify(execFile);
let dir: string | undefined;

afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function build(copy: string, log: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await execute(join(copy, "build.sh"), ["--force"], {
      env: { ...process.env, PORTICO_BUILD_LOG: log },
      timeout: 120_000,
    });
    return { code: 0, stderr };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stderr: e.stderr ?? "" };
  }
}

test("the addon builds with one line on stderr, the compiler's in the log", async () => {
  dir = await mkdtemp(join(tmpdir(), "portico-addon-"));
  const copy = join(dir, "native");
  await cp(NATIVE, copy, {
    recursive: true,
    filter: (src) => !src.includes("/build/") && !src.endsWith("/build"),
  });
  const log = join(dir, "build-speaker-addon.log");
  const { code, stderr } = await build(copy, log);
  expect(code, stderr).toBe(0);
  expect(stderr.trim().split("\n")).toEqual([
    `portico: building the speaker's packet-socket addon with node-gyp (log in ${log})...`,
  ]);
  expect(await readFile(log, "utf8")).toMatch(
    /CC\(target\) Release\/obj\.target\/portico_packet\/packet_socket\.o/,
  );
  expect((await stat(join(copy, "build", "Release", "portico_packet.node"))).size).toBeGreaterThan(0);
}, 180_000);

test("a failed build shows the log's end, then one line saying what failed", async () => {
  dir = await mkdtemp(join(tmpdir(), "portico-addon-"));
  const copy = join(dir, "native");
  await cp(NATIVE, copy, {
    recursive: true,
    filter: (src) => !src.includes("/build/") && !src.endsWith("/build"),
  });
  await writeFile(join(copy, "interfaces.c"), "this is not C;\n");
  const log = join(dir, "build-speaker-addon.log");
  const { code, stderr } = await build(copy, log);
  expect(code).not.toBe(0);
  const lines = stderr.trim().split("\n");
  expect(lines.at(-1)).toBe(
    `portico: node-gyp could not build the speaker's addon (above, the end of ${log})`,
  );
  expect(stderr).toMatch(/interfaces\.c.*error/);
}, 180_000);
