// Kubernetes' own LoadBalancer tests, a fast subset (one per area, on the set-ups where Portico does it its own
// way: test/k8s-e2e/fastSubset.ts), unmodified, on the four set-ups `make test-conformance` runs in full: bare
// metal from the LAN (L2) and from behind a BGP router, and the eks and aks overlays with their emulators and
// edges. Each set-up is a local cluster of its own, with cluster DNS, Portico installed from its overlay; two run
// at a time, as each spends most of its time waiting.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { subsetFocus, subsetNames } from "../k8s-e2e/fastSubset.ts";
import { summarize } from "../k8s-e2e/results.ts";
import { runE2eTest } from "../k8s-e2e/runner.ts";
import { buildAll, SETUPS, startSetup, type Built } from "../k8s-e2e/setups.ts";

const LOGS = join(import.meta.dirname, "..", "..", ".run", "k8s-e2e");
const AT_ONCE = 2;

/** At most `limit` callers hold a slot at a time; the others wait their turn, first come first served. */
function slots(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = limit;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

describe.concurrent("Kubernetes' own LoadBalancer tests, fast subset", () => {
  let built: Built;
  const slot = slots(AT_ONCE);
  beforeAll(async () => {
    built = await buildAll();
    await mkdir(LOGS, { recursive: true });
  }, 1_800_000);

  for (const name of SETUPS)
    test(`${name}: ${subsetNames(name).length} tests pass`, { timeout: 2_400_000 }, () =>
      slot(async () => {
        const dir = await mkdtemp(join(tmpdir(), `portico-k8s-e2e-subset-${name}-`));
        const setup = await startSetup(name, dir, built);
        try {
          const logFile = join(LOGS, `${name}-subset.log`);
          const outcome = summarize(
            await runE2eTest(setup, built, { focus: subsetFocus(name), dir, logFile }),
            "[Feature:LoadBalancer]",
          );
          const failed = outcome.tests.filter((t) => t.state !== "passed");
          expect(failed, `see ${logFile}`).toEqual([]);
          // Every test of the subset ran (none renamed away upstream, none left out by the focus).
          expect(outcome.tests.map((t) => t.name).sort()).toEqual([...subsetNames(name)].sort());
        } finally {
          await setup.stop();
          await rm(dir, { recursive: true, force: true });
        }
      }),
    );
});
