// test/env/kustomize.sh: prints the cached kustomize, and says in one line what is missing when it cannot
// build one.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { onTestFinished } from "vitest";
import { expect, test } from "../../harness/index.ts";
import { kustomizeBinary } from "../../harness/manifests.ts";

const run = promisify(execFile);
const script = join(import.meta.dirname, "..", "..", "env", "kustomize.sh");

test("the cached kustomize is the pinned v5 release", async () => {
  const { stdout } = await run(await kustomizeBinary(), ["version"]);
  expect(stdout.trim()).toBe("v5.8.2");
});

test("without Go, kustomize.sh says so and how to install it, in one line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "portico-no-go-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  // A PATH with only what the script needs before it looks for Go.
  const bin = join(dir, "bin");
  mkdirSync(bin);
  for (const tool of ["bash", "dirname"]) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  const failed = await run(join(bin, "bash"), [script], {
    env: { PATH: bin, PORTICO_CACHE: join(dir, "cache") },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toMatch(
    /^portico: Go is not installed, so kustomize cannot be built: install Go .*\n$/,
  );
});
