// What one run of e2e.test says about the selected tests, read from Ginkgo's JSON report
// (`--ginkgo.json-report`): per test its outcome, duration and, when it did not pass, the framework's own reason
// (a skip's message, a failure's message and where it failed). Pure, so it is unit-tested on report excerpts.

/** The fields of Ginkgo's report (types.Report, types.SpecReport) read here. */
export interface GinkgoSuiteReport {
  SuiteSucceeded: boolean;
  RunTime?: number;
  SpecReports: GinkgoSpecReport[] | null;
}

export interface GinkgoSpecReport {
  ContainerHierarchyTexts: string[] | null;
  LeafNodeType: string;
  LeafNodeText: string;
  LeafNodeLabels?: string[] | null;
  ContainerHierarchyLabels?: (string[] | null)[] | null;
  State: string;
  /** 0 for a spec the focus left out: it never ran. */
  NumAttempts: number;
  /** Nanoseconds. */
  RunTime: number;
  Failure?: { Message?: string; Location?: { FileName?: string; LineNumber?: number } };
}

export interface TestOutcome {
  name: string;
  state: string;
  seconds: number;
  /** Why it did not pass, in the framework's words. */
  reason?: string;
  /** When this outcome comes from a focused rerun rather than the set-up's full run: the rerun's date. */
  rerun?: string;
}

export interface SetupOutcome {
  passed: number;
  failed: number;
  skipped: number;
  tests: TestOutcome[];
}

/**
 * The outcomes of the specs whose name carries `tag` and that ran (those the focus left out are in the report as
 * skipped, never attempted), and of any suite-level node that failed, since it fails every test.
 */
export function summarize(reports: GinkgoSuiteReport[], tag: string): SetupOutcome {
  const tests: TestOutcome[] = [];
  for (const report of reports)
    for (const spec of report.SpecReports ?? []) {
      const name = [...(spec.ContainerHierarchyTexts ?? []), spec.LeafNodeText].filter(Boolean).join(" ");
      const isTest = spec.LeafNodeType === "It";
      if (isTest && (!name.includes(tag) || spec.NumAttempts === 0)) continue;
      if (!isTest && spec.State === "passed") continue;
      const outcome: TestOutcome = {
        name: isTest ? name : `[${spec.LeafNodeType}]`,
        state: spec.State,
        seconds: Math.round(spec.RunTime / 1e7) / 100,
      };
      const reason = reasonOf(spec);
      if (spec.State !== "passed" && reason) outcome.reason = reason;
      tests.push(outcome);
    }
  return { ...counts(tests), tests };
}

function counts(tests: TestOutcome[]): { passed: number; failed: number; skipped: number } {
  const count = (states: string[]) => tests.filter((t) => states.includes(t.state)).length;
  return {
    passed: count(["passed"]),
    skipped: count(["skipped", "pending"]),
    failed: count(["failed", "aborted", "panicked", "interrupted", "timedout"]),
  };
}

function reasonOf(spec: GinkgoSpecReport): string | undefined {
  const message = spec.Failure?.Message?.trim();
  if (!message) return undefined;
  // The first lines say what went wrong; the rest is often a dump of objects.
  const short = message.split("\n").slice(0, 3).join(" ").replace(/\s+/g, " ").slice(0, 400);
  const where = spec.Failure?.Location?.FileName;
  const file = where ? where.slice(where.indexOf("/test/e2e/") + 1) : undefined;
  return file ? `${short} (${file}:${spec.Failure!.Location!.LineNumber})` : short;
}

export interface Rerun {
  date: string;
  /** The commit the rerun is of (`+changes` when tracked files differed from it). */
  commit?: string;
  focus: string;
  command: string;
}

/**
 * A focused run of some tests (after a fix, say) folded into a set-up's last full run: each test it ran replaces
 * that test's outcome, marked with the rerun's date, and the counts are taken again; the full run's other
 * outcomes stay as they were, and the rerun is listed, so the file says which outcome came from which run.
 */
export function mergeRerun<T extends SetupOutcome & { reruns?: Rerun[] }>(
  full: T,
  rerun: SetupOutcome,
  info: Rerun,
): T {
  const tests = full.tests.map((t) => {
    const again = rerun.tests.find((r) => r.name === t.name);
    return again ? { ...again, rerun: info.date } : t;
  });
  for (const t of rerun.tests)
    if (!full.tests.some((f) => f.name === t.name)) tests.push({ ...t, rerun: info.date });
  return { ...full, ...counts(tests), tests, reruns: [...(full.reruns ?? []), info] };
}
