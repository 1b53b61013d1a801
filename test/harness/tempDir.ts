// A temporary folder for one test, removed when the test finishes (passed or failed), so a run leaves nothing in
// the machine's temporary directory. Call it from inside a test (or a helper a test calls).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

export function testTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
