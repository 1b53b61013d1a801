import { readFileSync } from "node:fs";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { ControllerMetrics } from "../../controller/metrics.ts";
import { metricsReference } from "../docs/metricsReference.ts";

const DOC = new URL("../../docs/metrics.md", import.meta.url);

describe("docs/metrics.md", () => {
  it("lists every Portico metric of both processes", () => {
    const text = metricsReference();
    const names = new ControllerMetrics().registry
      .getMetricsAsArray()
      .map((m) => (m as unknown as { name: string }).name)
      .filter((n) => n.startsWith("portico_"));
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) expect(text).toContain(`| \`${name}\` |`);
    expect(text).toContain("| `portico_speaker_bgp_session_up` | gauge | `peer` |");
  });

  it("is the registries as they are (regenerate with make docs)", async () => {
    const config = await resolveConfig(DOC);
    const expected = await format(metricsReference(), { ...config, parser: "markdown" });
    expect(readFileSync(DOC, "utf8")).toBe(expected);
  });
});
