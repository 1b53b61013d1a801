// The end-to-end test API: the local cluster started by e2eSetup.ts, seen as a user sees it (kubectl-like
// clients with admin rights) and as the LAN's client sees it (HTTP through the LoadBalancer address).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject, onTestFinished, test as base } from "vitest";
import { E2eNamespace } from "./localCluster/usage.ts";

export { expect, describe } from "vitest";
export { waitFor } from "./wait.ts";
export * from "./localCluster/usage.ts";

/**
 * The integration of the local cluster into vitest: `ns` is a fresh namespace on it, deleted after the test.
 */
export const test = base.extend<{ ns: E2eNamespace }>({
  ns: async ({ task }, use) => {
    const context = inject("e2e");
    const slug = task.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .slice(0, 40)
      .replace(/-+$/, "");
    const ns = await E2eNamespace.create(context, `${slug}-${Math.random().toString(36).slice(2, 6)}`);
    await use(ns);
    await ns.delete();
  },
});

/** A directory for a test's own logs, removed when the test ends unless PORTICO_KEEP_RUN=1 keeps it to be read. */
export function testLogDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `portico-e2e-${name}-`));
  onTestFinished(() => {
    if (process.env.PORTICO_KEEP_RUN !== "1") rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
