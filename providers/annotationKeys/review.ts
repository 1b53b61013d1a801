// Looks a Service's annotations up in the catalog. Keys of the families the Service's provider reads are
// implemented, refused, or accepted as no-ops; a key under one of those prefixes that the catalog does not know
// is refused too, with the nearest known key as a suggestion: a typo is the commonest reason a setting "does
// nothing". Keys of another provider's family belong to another cloud and are not read. The catalog is assembled
// from what each provider declares (its annotations catalog), by the registry (providers/registry.ts).
import { closestMatch } from "leven";
import { ConfigurationError } from "../errors.ts";
import { PORTICO_FAMILY } from "./portico.ts";
import type { KeyEntry, KeyFamily, ProviderAnnotations, ProviderName } from "./types.ts";

/**
 * The families every provider reads, each with the providers that read it: a provider's own families, and
 * Portico's `portico.io/` family with each key marked with the providers that honour it.
 */
export function assembleFamilies(
  providers: readonly { readonly name: ProviderName; readonly annotations: ProviderAnnotations }[],
): KeyFamily[] {
  const families = new Map<string, KeyFamily>();
  for (const { name, annotations } of providers)
    for (const family of annotations.families) {
      const known = families.get(family.anchor);
      families.set(family.anchor, { ...family, providers: [...(known?.providers ?? []), name] });
    }
  const honouredBy = new Map<KeyEntry, ProviderName[]>();
  for (const { name, annotations } of providers)
    for (const entry of annotations.porticoKeys)
      honouredBy.set(entry, [...(honouredBy.get(entry) ?? []), name]);
  const portico: KeyFamily = {
    ...PORTICO_FAMILY,
    providers: providers.map((p) => p.name),
    entries: [
      ...PORTICO_FAMILY.entries,
      ...[...honouredBy].map(([entry, names]) => ({ ...entry, providers: names })),
    ],
  };
  return [...families.values(), portico];
}

export interface KeyFinding {
  readonly key: string;
  /** Why it is refused and what to do instead, or (no-ops) what Portico does already. */
  readonly message: string;
}

export interface AnnotationReview {
  readonly refused: readonly KeyFinding[];
  readonly noops: readonly KeyFinding[];
}

const PLACEHOLDER = /<[a-z]+>/g;
const HAS_PLACEHOLDER = /<[a-z]+>/;
const matchers = new Map<KeyEntry, RegExp>();

/** A template's placeholders stand for a port number, or a word such as a protocol. */
function matcher(entry: KeyEntry): RegExp {
  let re = matchers.get(entry);
  if (!re) {
    const parts = entry.key.split(PLACEHOLDER).map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
    const holes = entry.key.match(PLACEHOLDER) ?? [];
    const source = parts
      .map((part, i) => part + (i < holes.length ? (holes[i] === "<port>" ? "\\d+" : "[A-Za-z0-9_]+") : ""))
      .join("");
    re = new RegExp(`^${source}$`);
    matchers.set(entry, re);
  }
  return re;
}

/** Every key Portico knows, by family: what porticoctl lists and the controller checks Services against. */
export class AnnotationCatalog {
  readonly families: readonly KeyFamily[];

  constructor(families: readonly KeyFamily[]) {
    this.families = families;
  }

  familyOf(key: string): KeyFamily | undefined {
    return this.families.find((family) => family.prefixes.some((prefix) => key.startsWith(prefix)));
  }

  entryFor(key: string): KeyEntry | undefined {
    return this.familyOf(key)?.entries.find((entry) => entry.key === key || matcher(entry).test(key));
  }

  review(annotations: Readonly<Record<string, string>>, provider: ProviderName): AnnotationReview {
    return reviewAnnotations(this, annotations, provider);
  }
}

function reviewAnnotations(
  catalog: AnnotationCatalog,
  annotations: Readonly<Record<string, string>>,
  provider: ProviderName,
): AnnotationReview {
  const refused: KeyFinding[] = [];
  const noops: KeyFinding[] = [];
  for (const key of Object.keys(annotations).sort()) {
    const family = catalog.familyOf(key);
    if (!family?.providers.includes(provider)) continue;
    const entry = catalog.entryFor(key);
    if (!entry) {
      // Templates are offered with the key's own port filled in, so a misspelt per-port key finds its match.
      const port = key.match(/\d+/)?.[0];
      const known = family.entries
        .map((e) => (port ? e.key.replaceAll("<port>", port) : e.key))
        .filter((k) => !HAS_PLACEHOLDER.test(k));
      const near = closestMatch(key, known, { maxDistance: 4 });
      // Portico's own prefix is Portico's alone; the others' keys are known to their anchor and to Portico.
      const knowers = family.anchor === "Portico" ? "Portico" : `${family.anchor} or Portico`;
      refused.push({
        key,
        message: `is not an annotation ${knowers} knows${near ? `; did you mean ${near}?` : "; remove it"}`,
      });
    } else if (entry.status === "refused") {
      refused.push({ key, message: `is not supported: ${entry.summary}` });
    } else if (entry.providers && !entry.providers.includes(provider)) {
      const where = entry.providers.join(" and ");
      refused.push({
        key,
        message: `applies only with the ${where} provider${entry.providers.length > 1 ? "s" : ""}; remove it`,
      });
    } else if (entry.status === "noop") {
      noops.push({ key, message: `${entry.summary} (accepted; nothing to change)` });
    }
  }
  return { refused, noops };
}

/** One error for every refused key, naming the first as the field (the condition holds one). */
export function refusalError(review: AnnotationReview): ConfigurationError | undefined {
  const [first, ...rest] = review.refused;
  if (!first) return undefined;
  const others = rest.map((f) => `metadata.annotations[${f.key}] ${f.message}`);
  return new ConfigurationError(
    "UnsupportedAnnotation",
    `metadata.annotations[${first.key}]`,
    first.message + (others.length ? `; also ${others.join("; ")}` : ""),
    "",
  );
}
