// Portico's alerting rules in a real Prometheus (Debian's package) scraping the local cluster's controller
// replicas and speakers, as the chart's PodMonitors would have it: a pool with one address, taken by a Service,
// raises PorticoPoolExhausted for real, and only then; and the Grafana dashboard's queries show series.
import { CustomObjectsApi } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { onTestFinished } from "vitest";
import { describe, expect, test, testLogDir, waitFor } from "../harness/e2e.ts";
import { TestPrometheus } from "../harness/prometheus.ts";

const ALERTS = fileURLToPath(new URL("../../manifests/charts/portico/files/alerts.yaml", import.meta.url));
const DASHBOARD = fileURLToPath(new URL("../../manifests/monitoring/dashboard.json", import.meta.url));
const SYSTEM = "portico-system";
/** On the LAN, outside the e2e pool and the Helm test's: one address, handed out only when a Service asks for its pool. */
const LONE = "192.0.2.210/32";
const API = { group: "portico.io", version: "v1alpha1", plural: "ipaddresspools" } as const;

describe("monitoring", () => {
  test("a real Prometheus scrapes every replica and speaker, and fires PorticoPoolExhausted when a pool runs out; the dashboard's queries show series", async ({
    ns,
  }) => {
    const dir = testLogDir("prometheus");
    const pods = await ns.core.listNamespacedPod({
      namespace: SYSTEM,
      labelSelector: "app.kubernetes.io/component=controller",
    });
    const controllers = pods.items.flatMap((p) => (p.status?.podIP ? [`${p.status.podIP}:8080`] : []));
    const speakers = ns.context.nodes.map((n) => `${n.host.ipv4}:7472`);
    const prometheus = await TestPrometheus.start(
      ns.context.nodes[0]!.host.namespace,
      dir,
      [
        {
          job: `${SYSTEM}/portico-controller`,
          targets: controllers,
          labels: { portico_component: "controller" },
        },
        { job: `${SYSTEM}/portico-speaker`, targets: speakers, labels: { portico_component: "speaker" } },
      ],
      [ALERTS],
      onTestFinished,
    );
    await waitFor(
      "every controller replica and speaker to be scraped",
      async () => {
        const up = await prometheus.query("up == 1");
        if (up.length === controllers.length + speakers.length) return true;
        throw new Error(`up: ${up.map((s) => s.metric.instance).join(", ") || "none"}`);
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );

    const pool = `${ns.name}-lone`;
    const custom = ns.kc.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      ...API,
      body: {
        apiVersion: `${API.group}/${API.version}`,
        kind: "IPAddressPool",
        metadata: { name: pool },
        spec: { addresses: [LONE], autoAssign: false },
      },
    });
    onTestFinished(async () => {
      await custom.deleteClusterCustomObject({ ...API, name: pool }).catch(() => undefined);
    });
    // The leader counts the pool, one address free: nothing to alert on yet.
    const free = `portico_pool_addresses{pool="${pool}",family="IPv4",state="available"} == 1 and on (instance) portico_leader == 1`;
    await waitFor(
      "the leader's count of the pool's free address",
      async () => (await prometheus.query(free)).length === 1 || undefined,
      {
        timeoutMs: 60_000,
        intervalMs: 1000,
      },
    );
    const exhausted = (alerts: Awaited<ReturnType<TestPrometheus["alerts"]>>) =>
      alerts.filter((a) => a.labels.alertname === "PorticoPoolExhausted" && a.labels.pool === pool);
    expect(exhausted(await prometheus.alerts())).toEqual([]);

    await ns.deployEcho("echo", 1);
    await ns.createLoadBalancer("web", "echo", {}, { "portico.io/address-pool": pool });
    expect(await ns.waitForAddress("web")).toBe(LONE.split("/")[0]);
    const fired = await waitFor(
      "PorticoPoolExhausted to fire for the pool",
      async () => exhausted(await prometheus.alerts()).find((a) => a.state === "firing"),
      { timeoutMs: 150_000, intervalMs: 2000 },
    );
    expect(fired.labels).toMatchObject({ pool, family: "IPv4", severity: "critical" });
    expect(fired.annotations.summary).toBe(`IPAddressPool ${pool} has no IPv4 address left`);

    // The dashboard: Prometheus accepts every panel's query, and each that applies to this set-up (bare metal,
    // L2) returns series. The clouds' panels and the BGP mode's have nothing to show here.
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      panels: { title: string; description: string; targets: { expr: string }[] }[];
    };
    const elsewhere = (d: string) => d.includes("(AWS and Azure)") || d.includes("BGP mode");
    const shown = dashboard.panels.filter((p) => !elsewhere(p.description));
    expect(shown.length).toBeGreaterThan(8);
    for (const panel of dashboard.panels.filter((p) => elsewhere(p.description)))
      for (const { expr } of panel.targets) await prometheus.query(expr);
    await waitFor(
      "every panel that applies to bare metal to show series",
      async () => {
        const empty: string[] = [];
        for (const panel of shown)
          for (const { expr } of panel.targets)
            if ((await prometheus.query(expr)).length === 0) empty.push(`${panel.title}: ${expr}`);
        if (empty.length === 0) return true;
        throw new Error(`no series for ${empty.join("; ")}`);
      },
      { timeoutMs: 60_000, intervalMs: 2000 },
    );
  });
});
