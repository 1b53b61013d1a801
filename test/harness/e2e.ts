// The end-to-end test API: the local cluster started by e2eSetup.ts, seen as a user sees it (kubectl-like
// clients with admin rights) and as the LAN's client sees it (HTTP through the LoadBalancer address).
import { inject, test as base } from "vitest";
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
