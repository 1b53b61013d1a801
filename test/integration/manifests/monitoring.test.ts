// Monitoring objects: the Helm chart (monitoring.enabled) and manifests/monitoring make the same PodMonitors and
// PrometheusRule, whose rules are files/alerts.yaml's; without the value the chart makes none of them.
import type { KubernetesObject } from "@kubernetes/client-node";
import { loadAllYaml } from "@kubernetes/client-node";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { load } from "js-yaml";
import { expect, test } from "../../harness/index.ts";
import { CHART, chartArgs, kustomizeBinary, MANIFESTS, renderChart } from "../../harness/manifests.ts";

const KINDS = ["PodMonitor", "PrometheusRule", "ConfigMap"];
const HELM_LABELS = ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"];

function monitoringObjects(objects: KubernetesObject[]): Map<string, KubernetesObject> {
  return new Map(
    objects
      .filter(
        (o) =>
          KINDS.includes(o.kind ?? "") &&
          (o.kind !== "ConfigMap" || o.metadata?.name?.endsWith("-dashboard")),
      )
      .map((o) => {
        const copy = structuredClone(o);
        for (const label of HELM_LABELS) delete copy.metadata?.labels?.[label];
        return [`${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`, copy] as const;
      }),
  );
}

async function kustomized(): Promise<KubernetesObject[]> {
  const { stdout } = await promisify(execFile)(
    await kustomizeBinary(),
    ["build", join(MANIFESTS, "monitoring")],
    {
      maxBuffer: 16 << 20,
    },
  );
  return loadAllYaml(stdout) as KubernetesObject[];
}

test("monitoring.enabled makes what manifests/monitoring makes: PodMonitors, the alerts and the dashboard", async () => {
  const chart = monitoringObjects(
    await renderChart([...chartArgs("metal"), "--set", "monitoring.enabled=true"]),
  );
  const kustomize = monitoringObjects(await kustomized());
  expect([...chart.keys()].sort()).toEqual([
    "ConfigMap/portico-system/portico-dashboard",
    "PodMonitor/portico-system/portico-controller",
    "PodMonitor/portico-system/portico-speaker",
    "PrometheusRule/portico-system/portico-alerts",
  ]);
  expect([...kustomize.keys()].sort()).toEqual([...chart.keys()].sort());
  for (const [key, o] of chart) expect(kustomize.get(key), key).toEqual(o);
});

test("the PrometheusRule's rules are files/alerts.yaml's, in the chart and in manifests/monitoring alike", async () => {
  const rules = load(readFileSync(join(CHART, "files", "alerts.yaml"), "utf8"));
  const rule = (await kustomized()).find((o) => o.kind === "PrometheusRule") as KubernetesObject & {
    spec: unknown;
  };
  expect(
    rule.spec,
    "manifests/monitoring/prometheusrule.yaml's spec must be manifests/charts/portico/files/alerts.yaml, indented",
  ).toEqual(rules);
});

test("docs/monitoring.md lists every alert", () => {
  const { groups } = load(readFileSync(join(CHART, "files", "alerts.yaml"), "utf8")) as {
    groups: { rules: { alert: string }[] }[];
  };
  const doc = readFileSync(join(MANIFESTS, "..", "docs", "monitoring.md"), "utf8");
  const alerts = groups.flatMap((g) => g.rules.map((r) => r.alert));
  expect(alerts.length).toBeGreaterThan(0);
  expect(alerts.filter((alert) => !doc.includes(`| \`${alert}\``))).toEqual([]);
});

test("docs/monitoring.md shows every panel of the dashboard with its queries", () => {
  const dashboard = JSON.parse(readFileSync(join(MANIFESTS, "monitoring", "dashboard.json"), "utf8")) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };
  const doc = readFileSync(join(MANIFESTS, "..", "docs", "monitoring.md"), "utf8");
  const missing = dashboard.panels.flatMap((p) => [
    ...(new RegExp(`^\\| ${p.title} +\\|`, "m").test(doc) ? [] : [p.title]),
    ...p.targets.map((t) => `\`${t.expr.replaceAll("|", "\\|")}\``).filter((q) => !doc.includes(q)),
  ]);
  expect(missing, "regenerate the table in docs/monitoring.md from the dashboard").toEqual([]);
});

test("without monitoring.enabled the chart makes no monitoring object; without a speaker, no speaker PodMonitor", async () => {
  expect(monitoringObjects(await renderChart(chartArgs("metal"))).size).toBe(0);
  const eks = monitoringObjects(await renderChart([...chartArgs("eks"), "--set", "monitoring.enabled=true"]));
  expect([...eks.keys()].sort()).toEqual([
    "ConfigMap/portico-system/portico-dashboard",
    "PodMonitor/portico-system/portico-controller",
    "PrometheusRule/portico-system/portico-alerts",
  ]);
  const labelled = await renderChart([
    ...chartArgs("eks"),
    ...["--set", "monitoring.enabled=true", "--set", "monitoring.labels.release=prometheus"],
  ]);
  for (const o of labelled.filter((o) => KINDS.includes(o.kind ?? "")))
    expect(o.metadata?.labels?.release, `${o.kind} ${o.metadata?.name}`).toBe("prometheus");
});
