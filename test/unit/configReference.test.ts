import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { OPTION_NAMES as CONTROLLER_OPTIONS, USAGE as CONTROLLER_USAGE } from "../../controller/config.ts";
import {
  OPTION_NAMES as PORTICOCTL_OPTIONS,
  USAGE as PORTICOCTL_USAGE,
} from "../../controller/cli/porticoctl.ts";
import { AZURE_KEYS, parseAzureConfig } from "../../providers/azure/config.ts";
import { OPTION_NAMES as SPEAKER_OPTIONS, USAGE as SPEAKER_USAGE } from "../../speaker/config.ts";
import { configReference, environmentRows, helmRows, usageEntries } from "../docs/configReference.ts";
import { usageGaps } from "./support/usage.ts";

const DOC = new URL("../../docs/configuration.md", import.meta.url);
const ROOT = new URL("../../", import.meta.url).pathname;

/** The part of the page under a `## ` heading. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => join(ROOT, dir, f));
}

describe("docs/configuration.md", () => {
  it("gives every flag of the controller and the speaker an entry of its own, with its meaning", () => {
    const text = configReference();
    for (const [heading, usage, options] of [
      ["Controller flags", CONTROLLER_USAGE, CONTROLLER_OPTIONS],
      ["Speaker flags", SPEAKER_USAGE, SPEAKER_OPTIONS],
    ] as const) {
      const entries = new Map(usageEntries(usage).map((e) => [e.name, e]));
      const part = section(text, heading);
      const flags = options.filter((name) => name !== "help");
      expect(flags.length).toBeGreaterThan(10);
      for (const name of flags) {
        expect(entries.get(name)?.meaning, `--${name} in ${heading}`).toBeTruthy();
        expect(part).toMatch(new RegExp(`^\\| \`--${name}[ =\`]`, "m"));
      }
    }
  });

  it("reads the environment variable and the default off each flag's help", () => {
    const provider = usageEntries(CONTROLLER_USAGE).find((e) => e.name === "provider")!;
    expect(provider).toMatchObject({
      env: ["PORTICO_PROVIDER"],
      meaning: "the provider: aws, azure, metal",
    });
    const level = usageEntries(SPEAKER_USAGE).find((e) => e.name === "log-level")!;
    expect(level).toMatchObject({ env: ["PORTICO_LOG_LEVEL"], default: "info" });
    expect(usageEntries(CONTROLLER_USAGE).find((e) => e.name === "workers")?.default).toBe("4");
  });

  it("shows porticoctl's --help, which lists every option it accepts", () => {
    // Its help names some of the controller's flags too, so only options missing from it are looked for.
    expect(usageGaps(PORTICOCTL_USAGE, PORTICOCTL_OPTIONS).unlisted).toEqual([]);
    expect(section(configReference(), "porticoctl")).toContain(PORTICOCTL_USAGE);
  });

  it("lists every azure.json key, each one the parser reads", () => {
    const part = section(configReference(), "azure.json");
    const base = {
      subscriptionId: "s",
      resourceGroup: "rg",
      location: "westeurope",
      vnetName: "v",
      subnetName: "n",
    };
    const wrong: Record<string, unknown> = { string: 5, boolean: "yes", integer: -1 };
    for (const [key, spec] of Object.entries(AZURE_KEYS)) {
      expect(part).toContain(`| \`${key}\` | ${spec.type} |`);
      // A value of the wrong kind is refused by name: the parser reads the key.
      const value = key === "loadBalancerSku" ? "Basic" : (wrong[spec.type] ?? "not this");
      expect(() => parseAzureConfig({ ...base, [key]: value }), key).toThrow(`"${key}"`);
    }
    // The keys the parser reads by name, besides the table's loops, are in the table too.
    const parser = readFileSync(join(ROOT, "providers/azure/config.ts"), "utf8");
    for (const [, key] of parser.matchAll(/\braw\.([A-Za-z]+)/g))
      expect(Object.keys(AZURE_KEYS)).toContain(key);
  });

  it("lists every environment variable the programs read", () => {
    const listed = new Set(environmentRows().map(([name]) => name!.replaceAll("`", "")));
    const read = new Set<string>();
    for (const file of ["controller", "providers", "speaker", "shared"].flatMap(sources)) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/\benv(?:\.|\[["'`])([A-Z][A-Z0-9_]+)/g)) read.add(m[1]!);
    }
    expect(read.size).toBeGreaterThan(10);
    expect([...read].filter((name) => !listed.has(name))).toEqual([]);
  });

  it("gives every Helm value a type from values.schema.json", () => {
    const rows = helmRows();
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.filter(([, type]) => type === "—").map(([path]) => path)).toEqual([]);
    expect(rows).toContainEqual([
      "`controller.replicas`",
      "integer",
      "`2`",
      expect.stringContaining("Replicas."),
    ]);
  });

  it("is the code as it is (regenerate with make docs)", async () => {
    const config = await resolveConfig(DOC);
    const expected = await format(configReference(), { ...config, parser: "markdown" });
    expect(readFileSync(DOC, "utf8")).toBe(expected);
  });
});
