// The chart's opt-in NetworkPolicy for the controller (networkPolicy.enabled). The local cluster's network plugin
// (the CNI bridge plugin) enforces no NetworkPolicy, so what is tested is what the chart renders: the controller's
// pods selected, ingress to the webhook and metrics ports only, egress to DNS, the configured ports and the
// instance metadata service only; none for the speakers, which run on the host network.
import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { expect, test } from "../../harness/index.ts";
import { chartArgs, renderChart, runHelm, CHART } from "../../harness/manifests.ts";

async function policies(args: string[]): Promise<V1NetworkPolicy[]> {
  return (await renderChart(args)).filter((o) => o.kind === "NetworkPolicy");
}

test("networkPolicy.enabled makes one NetworkPolicy, for the controller's pods, and nothing without it", async () => {
  expect(await policies(chartArgs("metal"))).toEqual([]);
  const [policy, ...more] = await policies([...chartArgs("metal"), "--set", "networkPolicy.enabled=true"]);
  expect(more).toEqual([]);
  expect(policy!.metadata).toMatchObject({ name: "portico-controller", namespace: "portico-system" });
  const spec = policy!.spec!;
  expect(spec.podSelector?.matchLabels).toEqual({
    "app.kubernetes.io/name": "portico",
    "app.kubernetes.io/component": "controller",
  });
  expect(spec.policyTypes).toEqual(["Ingress", "Egress"]);
  expect(spec.ingress).toEqual([
    { ports: [{ port: "webhook", protocol: "TCP" }] },
    { ports: [{ port: "metrics", protocol: "TCP" }] },
  ]);
  expect(spec.egress).toEqual([
    {
      ports: [
        { port: 53, protocol: "UDP" },
        { port: 53, protocol: "TCP" },
      ],
    },
    {
      ports: [
        { port: 443, protocol: "TCP" },
        { port: 6443, protocol: "TCP" },
      ],
    },
    { to: [{ ipBlock: { cidr: "169.254.169.254/32" } }], ports: [{ port: 80, protocol: "TCP" }] },
  ]);
});

test("metricsFrom restricts who may scrape; egressPorts replaces the ports; a wrong port is refused", async () => {
  const from = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } };
  const [policy] = await policies([
    ...chartArgs("eks"),
    "--set",
    "networkPolicy.enabled=true",
    "--set-json",
    `networkPolicy.metricsFrom=${JSON.stringify([from])}`,
    "--set-json",
    "networkPolicy.egressPorts=[443]",
  ]);
  const metrics = policy!.spec!.ingress![1]!;
  expect(metrics.ports).toEqual([{ port: "metrics", protocol: "TCP" }]);
  // The client library reads `from` into `_from` (a reserved word in its models).
  expect(metrics._from).toEqual([from]);
  expect(policy!.spec!.egress![1]).toEqual({ ports: [{ port: 443, protocol: "TCP" }] });
  const refused = await runHelm([
    "template",
    "portico",
    CHART,
    ...chartArgs("eks"),
    "--set",
    "networkPolicy.enabled=true",
    "--set-json",
    "networkPolicy.egressPorts=[70000]",
  ]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/egressPorts/);
});
