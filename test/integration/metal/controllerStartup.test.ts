// The controller's command starts itself again, as the same process, with its V8 flags and malloc settings (see
// controller/main.ts): seen from inside both runs by a script Node preloads into each.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "vitest";
import { testTempDir } from "../../harness/tempDir.ts";

const MAIN = fileURLToPath(new URL("../../../controller/main.ts", import.meta.url));

/** Each start of the process: its pid and the Node.js flags it runs with. */
interface Start {
  pid: number;
  execArgv: string[];
  arenas: string | null;
  mmap: string | null;
}

async function starts(
  nodeOptions: string,
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<Start[]> {
  const preload = join(testTempDir("portico-startup-"), "report.cjs");
  writeFileSync(
    preload,
    'process.stderr.write("start " + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX ?? null, mmap: process.env.MALLOC_MMAP_THRESHOLD_ ?? null }) + "\\n");',
  );
  // --help prints the usage and exits before anything else happens.
  const result = await promisify(execFile)(process.execPath, [...nodeArgs, MAIN, "--help"], {
    env: { ...withoutArenas(process.env), ...env, NODE_OPTIONS: `--require ${preload} ${nodeOptions}` },
  }).catch((err: { stderr: string }) => err);
  return result.stderr
    .split("\n")
    .filter((line) => line.startsWith("start "))
    .map((line) => JSON.parse(line.slice(6)) as Start);
}

function withoutArenas(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { MALLOC_ARENA_MAX: _arenas, MALLOC_MMAP_THRESHOLD_: _mmap, ...rest } = env;
  return rest;
}

const OURS = ["--max-semi-space-size=4", "--heap-growing-percent=20"];

test("the controller restarts itself in place with its V8 flags and malloc settings", async () => {
  const [first, second, ...more] = await starts("");
  expect(more).toEqual([]);
  expect(first).toMatchObject({ arenas: null, mmap: null });
  expect(first!.execArgv.filter((a) => OURS.includes(a))).toEqual([]);
  expect(second).toMatchObject({ pid: first!.pid, arenas: "2", mmap: "32768" });
  expect(second!.execArgv).toEqual(expect.arrayContaining(OURS));
});

test("settings the operator chose are kept, and with all of them chosen there is no restart", async () => {
  const chosen = { MALLOC_ARENA_MAX: "4", MALLOC_MMAP_THRESHOLD_: "65536" };
  const [only, ...none] = await starts("--max-semi-space-size=16", chosen, ["--heap-growing-percent=50"]);
  expect(none).toEqual([]);
  expect(only).toMatchObject({ arenas: "4", mmap: "65536" });
  expect(only!.execArgv.filter((a) => OURS.includes(a))).toEqual([]);

  const [, second, ...more] = await starts("--max-semi-space-size=16");
  expect(more).toEqual([]);
  expect(second).toMatchObject({ arenas: "2", mmap: "32768" });
  expect(second!.execArgv).toContain("--heap-growing-percent=20");
  expect(second!.execArgv).not.toContain("--max-semi-space-size=4");

  const [, again] = await starts("", { MALLOC_ARENA_MAX: "8" });
  expect(again).toMatchObject({ arenas: "8", mmap: "32768" });
  expect(again!.execArgv).toEqual(expect.arrayContaining(OURS));
});
