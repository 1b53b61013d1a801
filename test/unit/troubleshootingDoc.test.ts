// docs/troubleshooting.md is organised by what `porticoctl doctor` reports: one `### <check>` section per check,
// in the order doctor runs them. This fails when the guide drifts from the code: a check without its section, a
// section for a check that no longer exists, a condition reason the code never sets, a shell example without
// its doc-test marker.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DOCTOR_CHECKS } from "../../controller/cli/finding.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const DOC = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");
const LINES = DOC.split("\n");

/** The lines of the `## <title>` section, up to the next `## ` heading. */
function section(title: string): string[] {
  const start = LINES.indexOf(`## ${title}`);
  if (start < 0) throw new Error(`docs/troubleshooting.md has no "## ${title}" section`);
  const end = LINES.findIndex((l, i) => i > start && l.startsWith("## "));
  return LINES.slice(start + 1, end < 0 ? undefined : end);
}

/** Non-test TypeScript sources under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe("docs/troubleshooting.md", () => {
  it("has one section per doctor check, named as the code names it, in the order doctor runs them", () => {
    const headings = section("Checks")
      .filter((l) => l.startsWith("### "))
      .map((l) => l.slice(4).trim());
    expect(headings).toEqual([...DOCTOR_CHECKS]);
    // No check section outside the checks part either.
    const all = LINES.filter((l) => l.startsWith("### ")).map((l) => l.slice(4).trim());
    expect(all.filter((h) => (DOCTOR_CHECKS as readonly string[]).includes(h))).toEqual([...DOCTOR_CHECKS]);
  });

  it("the list of checks is what the doctor's code reports", () => {
    const files = sources("controller/cli").filter((p) => /\/doctor\w*\.ts$/.test(p));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const reported = new Set(
      files.flatMap((p) => [...read(p).matchAll(/\bcheck: "([^"]+)"/g)].map((m) => m[1]!)),
    );
    expect([...reported].sort()).toEqual([...DOCTOR_CHECKS].sort());
  });

  it("names only condition and Event reasons the code sets", () => {
    const code = ["controller", "providers", "shared", "speaker"].flatMap(sources).map(read).join("\n");
    const rows = section("Conditions and Events on a Service").filter((l) => l.startsWith("| `"));
    const reasons = rows.flatMap((l) => [...l.split("|")[1]!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!));
    expect(reasons.length).toBeGreaterThan(20);
    const unknown = reasons.filter((r) => !code.includes(`"${r}"`));
    expect(unknown).toEqual([]);
  });

  it("marks every shell example as run or skipped (with a reason) for the doc tests", () => {
    const fences = LINES.flatMap((l, i) => (l.trim() === "```sh" ? [i] : []));
    expect(fences.length).toBeGreaterThan(0);
    for (const i of fences) {
      // The marker sits on the nearest non-empty line above the fence (prettier puts a blank line between).
      const above = LINES.slice(0, i).findLast((l) => l.trim() !== "");
      expect(above, `line ${i + 1}`).toMatch(/^<!-- doc-test: (run|skip: \S.*) -->$/);
    }
  });
});
