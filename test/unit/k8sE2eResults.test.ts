// How `make test-conformance` reads Ginkgo's JSON report: the focused tests with their outcome and the framework's
// reason, the specs the focus left out dropped, and a failed suite-level node counted as a failure.
import { describe, expect, test } from "vitest";
import { mergeRerun, summarize, type GinkgoSpecReport } from "../k8s-e2e/results.ts";

const TAG = "[Feature:LoadBalancer]";
const lb = ["[sig-network] LoadBalancers", "[Feature:LoadBalancer]"];

function spec(overrides: Partial<GinkgoSpecReport>): GinkgoSpecReport {
  return {
    ContainerHierarchyTexts: lb,
    LeafNodeType: "It",
    LeafNodeText: "should work",
    State: "passed",
    NumAttempts: 1,
    RunTime: 12_345_000_000,
    ...overrides,
  };
}

describe("summarize", () => {
  test("counts the focused tests by outcome, with durations and the framework's reasons", () => {
    const outcome = summarize(
      [
        {
          SuiteSucceeded: false,
          SpecReports: [
            spec({ LeafNodeText: "should be able to change the type and ports of a TCP service [Slow]" }),
            spec({
              LeafNodeText: "should only target nodes with endpoints",
              State: "failed",
              RunTime: 61_000_000_000,
              Failure: {
                Message: "Source IP was NOT preserved\nmore detail\nthird\nfourth line left out",
                Location: {
                  FileName: "/go/pkg/mod/k8s.io/kubernetes@v1.34.4/test/e2e/network/loadbalancer.go",
                  LineNumber: 1078,
                },
              },
            }),
            spec({
              LeafNodeText: "should work from pods",
              State: "skipped",
              RunTime: 1_000_000_000,
              Failure: { Message: "LoadBalancer uses 'Proxy' IPMode" },
            }),
            // Left out by the focus: in the report as skipped, never run.
            spec({
              ContainerHierarchyTexts: ["[sig-network] Services"],
              LeafNodeText: "should serve",
              State: "skipped",
              RunTime: 0,
            }),
          ],
        },
      ],
      TAG,
    );
    expect(outcome).toMatchObject({ passed: 1, failed: 1, skipped: 1 });
    expect(outcome.tests.map((t) => t.name)).toEqual([
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]",
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should only target nodes with endpoints",
      "[sig-network] LoadBalancers [Feature:LoadBalancer] should work from pods",
    ]);
    expect(outcome.tests[0]).toEqual(expect.objectContaining({ seconds: 12.35 }));
    expect(outcome.tests[0]!.reason).toBeUndefined();
    expect(outcome.tests[1]!.reason).toBe(
      "Source IP was NOT preserved more detail third (test/e2e/network/loadbalancer.go:1078)",
    );
    expect(outcome.tests[2]!.reason).toBe("LoadBalancer uses 'Proxy' IPMode");
  });

  test("a failed suite-level node is a failure of its own; a passed one is not listed", () => {
    const outcome = summarize(
      [
        {
          SuiteSucceeded: false,
          SpecReports: [
            spec({
              LeafNodeType: "SynchronizedBeforeSuite",
              LeafNodeText: "",
              ContainerHierarchyTexts: null,
              State: "passed",
            }),
            spec({
              LeafNodeType: "SynchronizedAfterSuite",
              LeafNodeText: "",
              ContainerHierarchyTexts: null,
              State: "failed",
              Failure: { Message: "namespaces left behind" },
            }),
          ],
        },
      ],
      TAG,
    );
    expect(outcome).toMatchObject({ passed: 0, failed: 1, skipped: 0 });
    expect(outcome.tests).toEqual([
      { name: "[SynchronizedAfterSuite]", state: "failed", seconds: 12.35, reason: "namespaces left behind" },
    ]);
  });

  test("a focused rerun replaces only the tests it ran, marked, and the counts follow", () => {
    const full = {
      date: "full",
      passed: 1,
      failed: 1,
      skipped: 0,
      tests: [
        { name: "a", state: "passed", seconds: 1 },
        { name: "b", state: "failed", seconds: 2, reason: "wget: not found" },
      ],
    };
    const info = { date: "later", focus: "b", command: "K8S_E2E_FOCUS=b make test-conformance" };
    const merged = mergeRerun(
      full,
      { passed: 1, failed: 0, skipped: 0, tests: [{ name: "b", state: "passed", seconds: 3 }] },
      info,
    );
    expect(merged).toMatchObject({ date: "full", passed: 2, failed: 0, skipped: 0, reruns: [info] });
    expect(merged.tests).toEqual([
      { name: "a", state: "passed", seconds: 1 },
      { name: "b", state: "passed", seconds: 3, rerun: "later" },
    ]);
  });
});
