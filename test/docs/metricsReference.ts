// docs/metrics.md, generated from the metrics registries of the controller and the speaker themselves, so the
// reference cannot drift from what /metrics serves: `make docs` writes it, test/unit/metricsReference.test.ts
// fails when it is stale. The process and Node.js metrics prom-client adds (process_*, nodejs_*) are named once.
import { ControllerMetrics } from "../../controller/metrics.ts";
import { SpeakerMetrics } from "../../speaker/metrics.ts";

interface Described {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly labelNames?: readonly string[];
}

function table(metrics: readonly Described[]): string {
  const rows = metrics
    .filter((m) => m.name.startsWith("portico_"))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((m) => {
      const labels = (m.labelNames ?? []).map((l) => `\`${l}\``).join(", ") || "—";
      return `| \`${m.name}\` | ${m.type} | ${labels} | ${m.help.replaceAll("|", "\\|")} |`;
    });
  return ["| Metric | Type | Labels | Meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

export function metricsReference(): string {
  const controller = new ControllerMetrics().registry.getMetricsAsArray() as unknown as Described[];
  const speaker = new SpeakerMetrics().registry.getMetricsAsArray() as unknown as Described[];
  return `# Metrics reference

<!-- Generated from the controller's and the speaker's metrics registries by \`make docs\`; do not edit. -->

Every metric Portico serves on \`/metrics\`, with its help text as \`/metrics\` gives it. Both processes also serve
prom-client's default process and Node.js metrics (\`process_*\`, \`nodejs_*\`). How to scrape them and the alerts
built on them: \`docs/monitoring.md\`.

## Controller

Served on the controller's \`--metrics-address\` (port 8080 in the manifests), by every replica; only the leader
reconciles, so most counters move on the leader only (\`portico_leader\` says which).

${table(controller)}

## Speaker

Served on each speaker's \`--metrics-address\` (port 7472 on the node's address in the manifests).

${table(speaker)}
`;
}

if (import.meta.main) process.stdout.write(metricsReference());
