// `make test-conformance`: Kubernetes' own sig-network LoadBalancer tests (k8s.io/kubernetes test/e2e/network,
// `[Feature:LoadBalancer]`, the ExternalTrafficPolicy: Local ones included), unmodified, run by e2e.test of the
// cluster's release against Portico on the local cluster, in each set-up of setups.ts in turn. Keeps each test's
// outcome and duration, and the framework's reason for any that did not pass, in bench/results/conformance.json,
// and writes docs/conformance.md's table from it (table.ts, with explanations.ts); e2e.test's whole output goes to
// .run/k8s-e2e/<set-up>.log. Exits non-zero when a test did not pass.
//   K8S_E2E_SETUPS=l2,bgp   which set-ups (default all four: l2, bgp, eks, aks)
//   K8S_E2E_FOCUS=<regexp>  a subset of the tests: their outcomes replace theirs in the set-up's last full run,
//                           marked as a rerun (results.ts mergeRerun)
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { mergeRerun, summarize, type GinkgoSuiteReport, type SetupOutcome } from "./results.ts";
import { runE2eTest } from "./runner.ts";
import { buildAll, SETUPS, startSetup, type Built, type Setup, type SetupName } from "./setups.ts";
import { EXPLANATIONS } from "./explanations.ts";
import { conformanceTable, withTable } from "./table.ts";
import { format, resolveConfig } from "prettier";

const TAG = "[Feature:LoadBalancer]";
const FOCUS = process.env.K8S_E2E_FOCUS ?? "\\[Feature:LoadBalancer\\]";
const ROOT = join(import.meta.dirname, "..", "..");
const LOGS = join(ROOT, ".run", "k8s-e2e");
const RESULTS = join(ROOT, "bench", "results", "conformance.json");
const PAGE = join(ROOT, "docs/conformance.md");

/** The commit the run is of, marked when tracked files differ from it. */
function commitOfTree(): string {
  const git = (...args: string[]) => execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8" }).trim();
  return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--untracked-files=no") ? "+changes" : ""}`;
}

/** e2e.test's run of the focused tests on a set-up, its progress on the terminal and its whole output in LOGS. */
function runFocused(setup: Setup, built: Built, dir: string): Promise<GinkgoSuiteReport[]> {
  // Each test's name as it starts and its outcome as it ends; everything in the log.
  const progress = /^(\[sig-|\[FAIL\]|•|S \[SKIPPED\]|\[FAILED\]|\[PANICKED\]|\[TIMEDOUT\]|Ran \d+ of)/;
  return runE2eTest(setup, built, {
    focus: FOCUS,
    dir,
    // A rerun of some tests logs apart, so that a full run of the same set-up beside it keeps its log.
    logFile: join(LOGS, `${setup.name}${process.env.K8S_E2E_FOCUS ? "-rerun" : ""}.log`),
    onLine: (line) => {
      if (progress.test(line)) console.error(`  ${setup.name}: ${line.trim()}`);
    },
  });
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0)
    throw new Error("the local cluster needs root (network namespaces, containerd)");
  const names = (process.env.K8S_E2E_SETUPS?.split(",") ?? SETUPS) as SetupName[];
  for (const name of names)
    if (!SETUPS.includes(name)) throw new Error(`unknown set-up ${name} (${SETUPS.join(", ")})`);
  await mkdir(LOGS, { recursive: true });
  const load = () => loadavg().map((l) => +l.toFixed(2));
  const built = await buildAll();
  const command = [
    ...(process.env.K8S_E2E_SETUPS ? [`K8S_E2E_SETUPS=${process.env.K8S_E2E_SETUPS}`] : []),
    ...(process.env.K8S_E2E_FOCUS ? [`K8S_E2E_FOCUS='${process.env.K8S_E2E_FOCUS}'`] : []),
    "make test-conformance",
  ].join(" ");
  const commit = commitOfTree();
  const setups: Record<string, SetupOutcome & Record<string, unknown>> = {};
  for (const name of names) {
    const dir = await mkdtemp(join(tmpdir(), `portico-k8s-e2e-${name}-`));
    const t0 = Date.now();
    const atStart = load();
    console.error(`portico: starting the ${name} set-up...`);
    const setup = await startSetup(name, dir, built);
    const t1 = Date.now();
    // Interrupted (Ctrl-C), the set-up is taken down rather than left for the next run to sweep.
    const interrupted = () => void setup.stop().finally(() => process.exit(130));
    process.once("SIGINT", interrupted).once("SIGTERM", interrupted);
    try {
      console.error(`portico: running e2e.test (${FOCUS}) from ${setup.runner.namespace}...`);
      const outcome = summarize(await runFocused(setup, built, dir), TAG);
      const full = {
        date: new Date(t0).toISOString(),
        commit,
        command,
        focus: FOCUS,
        // The machine's load (1, 5, 15 minutes) around the run: another engineer's tests may share it.
        loadAverage: { atStart, atEnd: load() },
        setupSeconds: (t1 - t0) / 1000,
        seconds: (Date.now() - t1) / 1000,
        ...outcome,
      };
      setups[name] = full;
      console.error(
        `portico: ${name}: ${outcome.passed} passed, ${outcome.failed} failed, ${outcome.skipped} skipped`,
      );
    } finally {
      process.off("SIGINT", interrupted).off("SIGTERM", interrupted);
      await setup.stop();
      if (process.env.PORTICO_KEEP_RUN !== "1") await rm(dir, { recursive: true, force: true });
    }
  }
  // Read only now, as runs side by side write it: a run of some set-ups replaces only theirs, and a run of some
  // tests (K8S_E2E_FOCUS) only those tests' outcomes in the set-up's last full run.
  const previous = JSON.parse(await readFile(RESULTS, "utf8").catch(() => "{}")) as {
    setups?: Record<string, SetupOutcome & Record<string, unknown>>;
  };
  const merged = Object.fromEntries(
    Object.entries(setups).map(([name, full]) => {
      const last = previous.setups?.[name];
      const rerun = { date: String(full.date), commit, focus: FOCUS, command };
      return [name, process.env.K8S_E2E_FOCUS && last ? mergeRerun(last, full, rerun) : full];
    }),
  );
  const result = {
    name: "conformance",
    kubernetes: built.build.version,
    machine: `${cpus().length} cores`,
    setups: { ...previous.setups, ...merged },
  };
  await mkdir(dirname(RESULTS), { recursive: true });
  await writeFile(RESULTS, JSON.stringify(result, null, 2) + "\n");
  const page = await readFile(PAGE, "utf8");
  // Formatted as `make check` wants it (prettier aligns a table's columns).
  const table = withTable(page, conformanceTable(result.setups, EXPLANATIONS));
  await writeFile(PAGE, await format(table, { ...(await resolveConfig(PAGE)), filepath: PAGE }));
  for (const [name, s] of Object.entries(setups)) {
    console.log(
      `\n${name}: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped (${Math.round(Number(s.seconds))} s)`,
    );
    for (const t of s.tests)
      console.log(
        `  ${t.state.padEnd(8)} ${String(t.seconds).padStart(7)} s  ${t.name}${t.reason ? `\n           ${t.reason}` : ""}`,
      );
  }
  console.log(`\nresults in ${RESULTS}, e2e.test's output in ${LOGS}/`);
  return Object.values(setups).some((s) => s.failed > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
