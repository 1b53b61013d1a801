import { readFileSync } from "node:fs";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { ANNOTATIONS } from "../../providers/registry.ts";
import { annotationsMarkdown, familyCounts } from "./annotations.ts";
import { main } from "./porticoctl.ts";

const DOC = new URL("../../docs/annotations.md", import.meta.url);

async function run(...args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await main(args, (s) => (out += s));
  return { code, out };
}

describe("porticoctl annotations", () => {
  it("lists every key of every family with its status, and the counts", async () => {
    const { code, out } = await run("annotations");
    expect(code).toBe(0);
    for (const family of ANNOTATIONS.families) {
      const c = familyCounts(family);
      expect(out).toContain(`${family.anchor} (`);
      expect(out).toContain(`${c.implemented} implemented, ${c.noop} no-op, ${c.refused} refused`);
      expect(c.implemented + c.noop + c.refused).toBe(family.entries.length);
      for (const entry of family.entries) expect(out).toContain(entry.key);
    }
  });

  it("narrows to one provider's families", async () => {
    const { out } = await run("annotations", "metal");
    expect(out).toContain("MetalLB (");
    expect(out).toContain("Portico (");
    expect(out).not.toContain("aws-load-balancer");
  });

  it("gives the catalog as data", async () => {
    const { out } = await run("annotations", "azure", "-o", "json");
    const data = JSON.parse(out) as { anchor: string; keys: { key: string; status: string }[] }[];
    expect(data.map((f) => f.anchor)).toEqual(["cloud-provider-azure", "Portico"]);
    expect(data[0]!.keys).toContainEqual(
      expect.objectContaining({ key: "service.beta.kubernetes.io/azure-pls-create", status: "refused" }),
    );
  });

  it("refuses a provider it does not know", async () => {
    expect((await run("annotations", "gcp")).code).toBe(2);
  });
});

describe("docs/annotations.md", () => {
  it("is the catalog as it is (regenerate with porticoctl annotations -o markdown)", async () => {
    const config = await resolveConfig(DOC);
    const expected = await format(annotationsMarkdown(), { ...config, parser: "markdown" });
    expect(readFileSync(DOC, "utf8")).toBe(expected);
  });
});
