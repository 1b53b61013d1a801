// `porticoctl annotations`: every annotation key Portico reads or refuses, family by family, with its status —
// the same catalog the controller checks Services against, so what it prints is what the controller does.
import { ANNOTATIONS } from "../../providers/registry.ts";
import type { KeyFamily, KeyStatus, ProviderName } from "../../providers/annotationKeys/types.ts";
import type { Printer } from "./render.ts";

const STATUS_ORDER: KeyStatus[] = ["implemented", "noop", "refused"];
const STATUS_WORDS: Record<KeyStatus, string> = {
  implemented: "implemented",
  noop: "no-op",
  refused: "refused",
};

export function familyCounts(family: KeyFamily): Record<KeyStatus, number> {
  const counts: Record<KeyStatus, number> = { implemented: 0, noop: 0, refused: 0 };
  for (const entry of family.entries) counts[entry.status]++;
  return counts;
}

function countLine(family: KeyFamily): string {
  const counts = familyCounts(family);
  return STATUS_ORDER.map((s) => `${counts[s]} ${STATUS_WORDS[s]}`).join(", ");
}

function families(provider?: ProviderName): KeyFamily[] {
  return ANNOTATIONS.families.filter((f) => !provider || f.providers.includes(provider));
}

function sorted(family: KeyFamily) {
  return [...family.entries].sort(
    (a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || a.key.localeCompare(b.key),
  );
}

export function annotations(printer: Printer, provider?: ProviderName): number {
  const chosen = families(provider);
  if (printer.structured) {
    printer.data(
      chosen.map((f) => ({
        anchor: f.anchor,
        prefixes: f.prefixes,
        providers: f.providers,
        counts: familyCounts(f),
        keys: sorted(f),
      })),
    );
    return 0;
  }
  for (const family of chosen) {
    printer.line(
      printer.paint(`${family.anchor} (${family.prefixes.join(", ")}): ${countLine(family)}`, "bold"),
    );
    for (const entry of sorted(family)) {
      const health = entry.status === "refused" ? "warn" : "ok";
      const only = entry.providers ? ` [${entry.providers.join(", ")} only]` : "";
      printer.line(`  ${printer.paint(STATUS_WORDS[entry.status].padEnd(11), health)} ${entry.key}${only}`);
      if (printer.format === "wide") printer.line(`              ${entry.summary}`);
    }
    printer.line();
  }
  return 0;
}

/** The reference page kept in docs/annotations.md (a unit test checks it matches the catalog). */
export function annotationsMarkdown(): string {
  const out = [
    "# Annotations",
    "",
    "Generated from the catalog the controller checks every Service against (`porticoctl annotations -o markdown`).",
    "Every key under these prefixes is either implemented, accepted as a no-op (Portico already behaves as the",
    "key asks; the Service gets one Normal Event saying so), or refused: the Service gets a Warning Event and a",
    "`False` `portico.io/LoadBalancerReady` condition naming the key and what to do instead, and nothing is made.",
    "A key under a family's prefix that is in no list below (a typo) is refused too, with the nearest known key",
    "suggested. A family is read only by the providers named with it: on other providers its keys belong to",
    "another cloud and are not read.",
    "",
  ];
  for (const family of ANNOTATIONS.families) {
    out.push(`## ${family.anchor}`, "");
    out.push(
      `Prefixes ${family.prefixes.map((p) => `\`${p}\``).join(", ")}; read by the ${family.providers.join(", ")} provider${family.providers.length > 1 ? "s" : ""}. ${countLine(family)}.`,
      "",
    );
    out.push("| Key | Status | What Portico does |", "| --- | --- | --- |");
    for (const entry of sorted(family)) {
      const only = entry.providers ? ` (${entry.providers.join(", ")} only)` : "";
      out.push(
        `| \`${entry.key}\` | ${STATUS_WORDS[entry.status]} | ${entry.summary.replaceAll("|", "\\|")}${only} |`,
      );
    }
    out.push("");
  }
  return out.join("\n");
}
