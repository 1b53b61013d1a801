// The speaker's command starts itself again, as the same process, with a small young generation (see
// speaker/main.ts): seen from inside both runs by a script Node preloads into each.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "vitest";
import { testTempDir } from "../../harness/tempDir.ts";

const MAIN = fileURLToPath(new URL("../../../speaker/main.ts", import.meta.url));

/** Each start of the process: its pid and the Node.js flags it runs with. */
async function starts(
  nodeOptions: string,
  env: Record<string, string> = {},
): Promise<{ pid: number; execArgv: string[]; arenas?: string }[]> {
  const preload = join(testTempDir("portico-startup-"), "report.cjs");
  writeFileSync(
    preload,
    'process.stderr.write("start " + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX }) + "\\n");',
  );
  // --help prints the usage and exits 2 before anything else happens.
  const result = await promisify(execFile)(process.execPath, [MAIN, "--help"], {
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: undefined,
      ...env,
      NODE_OPTIONS: `--require ${preload} ${nodeOptions}`,
    },
  }).catch((err: { stderr: string }) => err);
  return result.stderr
    .split("\n")
    .filter((line) => line.startsWith("start "))
    .map((line) => JSON.parse(line.slice(6)) as { pid: number; execArgv: string[]; arenas?: string });
}

test("the speaker restarts itself in place with a small young generation and two malloc arenas", async () => {
  const [first, second, ...more] = await starts("");
  expect(more).toEqual([]);
  expect(first!.execArgv).not.toContain("--max-semi-space-size=1");
  expect(first!.arenas).toBeUndefined();
  expect(second!.execArgv).toContain("--max-semi-space-size=1");
  expect(second!.arenas).toBe("2");
  expect(second!.pid).toBe(first!.pid);
});

test("a number of malloc arenas the operator chose is kept", async () => {
  const [, second] = await starts("", { MALLOC_ARENA_MAX: "4" });
  expect(second!.arenas).toBe("4");
});

test("a young generation size the operator chose is kept, without restarting", async () => {
  const runs = await starts("--max-semi-space-size=8");
  expect(runs).toHaveLength(1);
});
