// The controller's command starts itself again, as the same process, with a small young generation and two
// malloc arenas (see controller/main.ts): seen from inside both runs by a script Node preloads into each.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "vitest";

const MAIN = fileURLToPath(new URL("../../../controller/main.ts", import.meta.url));

/** Each start of the process: its pid and the Node.js flags it runs with. */
interface Start {
  pid: number;
  execArgv: string[];
  arenas: string | null;
}

async function starts(nodeOptions: string, env: NodeJS.ProcessEnv = {}): Promise<Start[]> {
  const preload = join(mkdtempSync(join(tmpdir(), "portico-startup-")), "report.cjs");
  writeFileSync(
    preload,
    'process.stderr.write("start " + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX ?? null }) + "\\n");',
  );
  // --help prints the usage and exits before anything else happens.
  const result = await promisify(execFile)(process.execPath, [MAIN, "--help"], {
    env: { ...withoutArenas(process.env), ...env, NODE_OPTIONS: `--require ${preload} ${nodeOptions}` },
  }).catch((err: { stderr: string }) => err);
  return result.stderr
    .split("\n")
    .filter((line) => line.startsWith("start "))
    .map((line) => JSON.parse(line.slice(6)) as Start);
}

function withoutArenas(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { MALLOC_ARENA_MAX: _arenas, ...rest } = env;
  return rest;
}

test("the controller restarts itself in place with a small young generation and two malloc arenas", async () => {
  const [first, second, ...more] = await starts("");
  expect(more).toEqual([]);
  expect(first).toMatchObject({ arenas: null });
  expect(first!.execArgv).not.toContain("--max-semi-space-size=4");
  expect(second).toMatchObject({ pid: first!.pid, arenas: "2" });
  expect(second!.execArgv).toContain("--max-semi-space-size=4");
});

test("settings the operator chose are kept, without restarting when both are", async () => {
  expect(await starts("--max-semi-space-size=16", { MALLOC_ARENA_MAX: "4" })).toEqual([
    expect.objectContaining({ arenas: "4" }),
  ]);
  const [, second, ...more] = await starts("--max-semi-space-size=16");
  expect(more).toEqual([]);
  expect(second).toMatchObject({ arenas: "2" });
  expect(second!.execArgv).not.toContain("--max-semi-space-size=4");
  const [, again] = await starts("", { MALLOC_ARENA_MAX: "8" });
  expect(again).toMatchObject({ arenas: "8" });
  expect(again!.execArgv).toContain("--max-semi-space-size=4");
});
