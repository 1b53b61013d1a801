// Portico's alerting rules (manifests/charts/portico/files/alerts.yaml) under Prometheus' own rule tester:
// `promtool test rules` evaluates every rule over crafted series, minute by minute, exactly as Prometheus would.
// Each alert has a case where it fires (with the labels and the annotations, rendered, that an operator gets) and
// one where it stays quiet though a neighbouring series looks like trouble. The expected annotations are the
// rule's own templates filled in here, so a template that renders wrongly ($value, a label) fails too.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { dump, load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ALERT_CASES, type AlertCase } from "./alertCases.ts";

const RULES = fileURLToPath(new URL("../../../manifests/charts/portico/files/alerts.yaml", import.meta.url));

interface Rule {
  alert: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

let dir: string;
let rules: Map<string, Rule>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "portico-alerts-"));
  const file = load(await readFile(RULES, "utf8")) as { groups: { rules: Rule[] }[] };
  rules = new Map(file.groups.flatMap((g) => g.rules).map((r) => [r.alert, r]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The rule's annotation templates with {{ $value }} and {{ $labels.name }} filled in. */
function rendered(rule: Rule, labels: Record<string, string>, value: string): Record<string, string> {
  const fill = (text: string) =>
    text
      .replace(/\{\{ \$value \}\}/g, value)
      .replace(/\{\{ \$labels\.([a-z_]+) \}\}/g, (_, name: string) => labels[name] ?? "");
  return Object.fromEntries(Object.entries(rule.annotations ?? {}).map(([k, v]) => [k, fill(v)]));
}

/** A promtool test for one case: its series, and at each evaluation time the alerts expected (none when quiet). */
function promtoolTest(c: AlertCase) {
  const rule = rules.get(c.alert)!;
  return {
    interval: "1m",
    input_series: Object.entries(c.series).map(([series, values]) => ({ series, values })),
    alert_rule_test: [
      ...(c.fires ?? []).map((f) => ({
        eval_time: f.at,
        alertname: c.alert,
        exp_alerts: [
          {
            exp_labels: { ...rule.labels, ...f.labels },
            exp_annotations: rendered(rule, f.labels, f.value ?? ""),
          },
        ],
      })),
      ...c.quiet.map((at) => ({ eval_time: at, alertname: c.alert, exp_alerts: [] })),
    ],
  };
}

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)("promtool", args, { cwd: dir, timeout: 60_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? e.message}`, {
      cause: err,
    });
  }
}

describe("Portico's alerting rules", () => {
  test("are valid rules, every one covered by a case below", async () => {
    expect(await promtool("check", "rules", RULES)).toContain(`SUCCESS: ${rules.size} rules found`);
    const covered = new Set(ALERT_CASES.map((c) => c.alert));
    expect([...rules.keys()].filter((alert) => !covered.has(alert))).toEqual([]);
    for (const alert of covered) expect(rules.has(alert), `a rule ${alert}`).toBe(true);
    // Each alert both fires and stays quiet somewhere.
    for (const alert of rules.keys()) {
      const cases = ALERT_CASES.filter((c) => c.alert === alert);
      expect(
        cases.some((c) => (c.fires ?? []).length > 0),
        `${alert} fires in some case`,
      ).toBe(true);
      expect(
        cases.some((c) => c.quiet.length > 0),
        `${alert} stays quiet in some case`,
      ).toBe(true);
    }
  });

  test.each(ALERT_CASES.map((c) => [c.name, c] as const))("%s", async (_, c) => {
    const file = join(dir, `${c.alert}-${ALERT_CASES.indexOf(c)}.test.yaml`);
    await writeFile(file, dump({ rule_files: [RULES], evaluation_interval: "1m", tests: [promtoolTest(c)] }));
    expect(await promtool("test", "rules", file)).toContain("SUCCESS");
  });
});
