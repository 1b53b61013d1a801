// The fast subset `make test` runs of Kubernetes' LoadBalancer tests: its focus selects exactly its tests among
// those the last `make test-conformance` ran, so a name that drifted from upstream's is caught here, not by a
// subset that silently runs nothing.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { FAST_SUBSET, subsetFocus, subsetNames } from "../k8s-e2e/fastSubset.ts";
import { SETUPS } from "../k8s-e2e/setups.ts";

const results = JSON.parse(
  readFileSync(new URL("../../bench/results/conformance.json", import.meta.url), "utf8"),
) as { setups: Record<string, { tests: { name: string }[] }> };

describe.each(SETUPS)("the fast subset on %s", (setup) => {
  const ran = results.setups[setup]!.tests.map((t) => t.name);

  test("names only tests the full run has", () => {
    for (const name of subsetNames(setup)) expect(ran).toContain(name);
  });

  test("its focus selects exactly them", () => {
    const focus = new RegExp(subsetFocus(setup));
    expect(ran.filter((name) => focus.test(name)).sort()).toEqual([...subsetNames(setup)].sort());
  });
});

test("every area runs on some set-up, and every set-up runs Local's health check node port", () => {
  for (const t of FAST_SUBSET) expect(t.only ?? SETUPS, t.area).not.toHaveLength(0);
  for (const setup of SETUPS)
    expect(
      subsetNames(setup).some((name) => name.includes("should target all nodes with endpoints")),
      setup,
    ).toBe(true);
});
