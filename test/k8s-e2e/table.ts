// The conformance table of docs/conformance.md, made from bench/results/conformance.json and the explanations kept beside the
// tests (explanations.ts): per set-up its counts, then every test that did not pass there with why. Pure, so it
// is unit-tested; `make test-conformance` writes it between the page's markers.
import type { Rerun, SetupOutcome, TestOutcome } from "./results.ts";

/** Why a test does not pass on some set-ups: `test` is matched against the test's short name. */
export interface Explanation {
  setups: readonly string[];
  test: string;
  why: string;
}

export type RecordedSetup = SetupOutcome & { date?: string; commit?: string; reruns?: Rerun[] };

export const TABLE_START = "<!-- conformance table: written by make test-conformance -->";
export const TABLE_END = "<!-- end of the conformance table -->";

const SETUP_TITLES: Record<string, string> = {
  l2: "bare metal, L2",
  bgp: "bare metal, BGP",
  eks: "EKS overlay, AWS emulator and NLB edge",
  aks: "AKS overlay, Azure emulator and edge",
};

/** A test's name without the suite's prefix and Ginkgo's labels: what a reader looks for. */
export function shortName(name: string): string {
  return name
    .replace(/^\[sig-network\] LoadBalancers /, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function explain(setup: string, test: TestOutcome, explanations: readonly Explanation[]): string {
  const short = shortName(test.name);
  const known = explanations.find((e) => e.setups.includes(setup) && short.includes(e.test));
  if (known) return known.why;
  return `not explained yet; the framework says: ${test.reason ?? "(nothing)"}`;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function conformanceTable(
  setups: Readonly<Record<string, RecordedSetup>>,
  explanations: readonly Explanation[],
): string {
  const order = Object.keys(SETUP_TITLES).filter((name) => setups[name]);
  const lines = [
    "| Set-up | Passed | Failed | Skipped | Run |",
    "| ------ | -----: | -----: | ------: | --- |",
    ...order.map((name) => {
      const s = setups[name]!;
      const rerun = s.tests.filter((t) => t.rerun).length;
      const commits = [...new Set((s.reruns ?? []).map((r) => r.commit).filter(Boolean))].join(", ");
      const run = [
        s.date?.slice(0, 10),
        s.commit && `at ${s.commit}`,
        rerun && `(${rerun} test${rerun > 1 ? "s" : ""} rerun${commits ? ` at ${commits}` : ""})`,
      ]
        .filter(Boolean)
        .join(" ");
      return `| ${name} (${SETUP_TITLES[name]}) | ${s.passed} | ${s.failed} | ${s.skipped} | ${run} |`;
    }),
  ];
  const notPassed = order.flatMap((name) =>
    setups[name]!.tests.filter((t) => t.state !== "passed").map((t) => ({ name, t })),
  );
  if (notPassed.length)
    lines.push(
      "",
      "| Set-up | Test | Outcome | Why |",
      "| ------ | ---- | ------- | --- |",
      ...notPassed.map(
        ({ name, t }) =>
          `| ${name} | ${cell(shortName(t.name))} | ${t.state} | ${cell(explain(name, t, explanations))} |`,
      ),
    );
  return lines.join("\n");
}

/** `page` with the text between the table's markers replaced by `table`. */
export function withTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error("docs/conformance.md has no conformance table markers");
  return `${page.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${page.slice(end)}`;
}
