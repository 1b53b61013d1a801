// Runs e2e.test (Kubernetes' own end-to-end tests, unmodified) against a set-up, from where the set-up's client of
// the load balancers sits, and returns Ginkgo's JSON report. Used by `make test-conformance` (run.ts) for the whole
// [Feature:LoadBalancer] suite and by the end-to-end suite for its fast subset (test/e2e/conformance.test.ts).
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { LanProcess } from "../harness/netns.ts";
import type { GinkgoSuiteReport } from "./results.ts";
import type { Built, Setup } from "./setups.ts";

export interface E2eTestRun {
  /** Ginkgo's focus: a regular expression over the tests' full names. */
  focus: string;
  /** Where the framework writes its report and keeps its HOME. */
  dir: string;
  /** e2e.test's whole output. */
  logFile: string;
  /** Each line e2e.test prints, as it prints it. */
  onLine?: (line: string) => void;
}

export async function runE2eTest(setup: Setup, built: Built, run: E2eTestRun): Promise<GinkgoSuiteReport[]> {
  const reportFile = join(run.dir, "report.json");
  await rm(run.logFile, { force: true });
  const e2e = new LanProcess(
    `e2e.test-${setup.name}`,
    run.logFile,
    setup.runner.namespace,
    built.build.e2eTest,
    [
      `--kubeconfig=${setup.kubeconfig}`,
      // The framework's provider-agnostic one: no cloud API is called, and no test is gated on a provider here.
      "--provider=skeleton",
      `--kubectl-path=${built.tools.kubectl}`,
      `--ginkgo.focus=${run.focus}`,
      "--ginkgo.v",
      "--ginkgo.no-color",
      "--ginkgo.timeout=6h",
      `--ginkgo.json-report=${reportFile}`,
      `--report-dir=${run.dir}`,
    ],
    {
      env: { ...process.env, HOME: run.dir, KUBECONFIG: setup.kubeconfig },
      ...(run.onLine ? { onLine: run.onLine } : {}),
    },
  );
  const code = await e2e.exited;
  const report = await readFile(reportFile, "utf8").catch(() => undefined);
  if (!report) throw new Error(`e2e.test exited with ${code} without a report (see ${run.logFile})`);
  return JSON.parse(report) as GinkgoSuiteReport[];
}
