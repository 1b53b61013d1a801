// The conformance table of docs/conformance.md: counts per set-up in a fixed order, every test that did not pass with the
// explanation kept for it on that set-up (or the framework's reason, marked as unexplained), written between the
// page's markers and nowhere else.
import { describe, expect, test } from "vitest";
import {
  conformanceTable,
  shortName,
  TABLE_END,
  TABLE_START,
  withTable,
  type RecordedSetup,
} from "../k8s-e2e/table.ts";

const AFFINITY =
  "[sig-network] LoadBalancers [Feature:LoadBalancer] should be able to switch session affinity for LoadBalancer service with Local traffic policy [Slow] [LinuxOnly]";
const FROM_PODS =
  "[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer] [Slow] should work from pods";

function setup(tests: RecordedSetup["tests"], extra: Partial<RecordedSetup> = {}): RecordedSetup {
  const count = (s: string) => tests.filter((t) => t.state === s).length;
  return { passed: count("passed"), failed: count("failed"), skipped: count("skipped"), tests, ...extra };
}

describe("conformanceTable", () => {
  test("shortName drops the suite's prefix and Ginkgo's labels", () => {
    expect(shortName(AFFINITY)).toBe(
      "should be able to switch session affinity for LoadBalancer service with Local traffic policy",
    );
    expect(shortName(FROM_PODS)).toBe("ExternalTrafficPolicy: Local should work from pods");
  });

  test("counts per set-up in the set-ups' order, then each test not passed with why", () => {
    const table = conformanceTable(
      {
        eks: setup(
          [
            { name: FROM_PODS, state: "skipped", seconds: 3, reason: "LoadBalancer uses 'Proxy' IPMode" },
            { name: AFFINITY, state: "passed", seconds: 40, rerun: "2026-11-28T23:06:55.789Z" },
          ],
          {
            reruns: [{ date: "2026-11-28T23:06:55.789Z", commit: "05817f9", focus: "affinity", command: "" }],
          },
        ),
        l2: setup(
          [
            { name: AFFINITY, state: "failed", seconds: 60, reason: "Affinity shouldn't hold but did." },
            { name: FROM_PODS, state: "passed", seconds: 10 },
          ],
          { date: "2026-11-28T20:04:22.149Z", commit: "a69acfc" },
        ),
      },
      [
        { setups: ["l2"], test: "switch session affinity", why: "one node announces | answers" },
        { setups: ["eks"], test: "should work from pods", why: "the ingress is a hostname" },
      ],
    );
    const lines = table.split("\n");
    expect(lines[2]).toBe("| l2 (bare metal, L2) | 1 | 1 | 0 | 2026-11-28 at a69acfc |");
    expect(lines[3]).toBe(
      "| eks (EKS overlay, AWS emulator and NLB edge) | 1 | 0 | 1 | (1 test rerun at 05817f9) |",
    );
    expect(lines.slice(7)).toEqual([
      `| l2 | ${shortName(AFFINITY)} | failed | one node announces \\| answers |`,
      "| eks | ExternalTrafficPolicy: Local should work from pods | skipped | the ingress is a hostname |",
    ]);
  });

  test("a test without an explanation for its set-up is marked, with the framework's reason", () => {
    const table = conformanceTable(
      { bgp: setup([{ name: AFFINITY, state: "failed", seconds: 60, reason: "Affinity should hold" }]) },
      [{ setups: ["l2"], test: "switch session affinity", why: "one node announces" }],
    );
    expect(table).toContain("| failed | not explained yet; the framework says: Affinity should hold |");
  });

  test("withTable replaces only what lies between the markers", () => {
    const readme = `# Portico\n\nbefore\n${TABLE_START}\n\nold table\n\n${TABLE_END}\nafter\n`;
    expect(withTable(readme, "new table")).toBe(
      `# Portico\n\nbefore\n${TABLE_START}\n\nnew table\n\n${TABLE_END}\nafter\n`,
    );
    expect(() => withTable("# no markers\n", "t")).toThrow(/markers/);
  });
});
