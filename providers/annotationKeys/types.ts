// The shape of the annotation catalog: every key of the annotation families Portico reads, with what Portico
// does with it. Keys Portico does not implement are refused, never ignored: a user must be able to trust that a
// setting they wrote either took effect or was reported.

/** A provider's name, as providers/registry.ts lists them. */
export type ProviderName = string;

/**
 * - implemented: Portico does what the anchor documents for the key (values are checked by the provider).
 * - refused: a Service carrying the key gets a Warning Event and a False condition; nothing is made.
 * - noop: Portico already behaves as the anchor does with the key set; accepted, and the Service is told so once.
 */
export type KeyStatus = "implemented" | "refused" | "noop";

export interface KeyEntry {
  /** The full key, or a template with `<port>`, `<proto>` or `<setting>` placeholders for keyed families. */
  readonly key: string;
  readonly status: KeyStatus;
  /** implemented/noop: what it does, in one sentence. refused: why, and what to do instead. */
  readonly summary: string;
  /** The providers that honour an implemented Portico key (default: every provider of the family). */
  readonly providers?: readonly ProviderName[];
}

export interface KeyFamily {
  /** The implementation whose keys these are (what users move over from). */
  readonly anchor: string;
  /** Keys starting with one of these belong to the family. */
  readonly prefixes: readonly string[];
  /** The providers that read this family; on other providers its keys are another cloud's and not read. */
  readonly providers: readonly ProviderName[];
  readonly entries: readonly KeyEntry[];
}

/** A family as a provider declares it: the registry records which providers read it (providers/registry.ts). */
export type ProviderKeyFamily = Omit<KeyFamily, "providers">;

/** A provider's annotations: the families it reads, and which of Portico's own `portico.io/` keys it honours. */
export interface ProviderAnnotations {
  readonly families: readonly ProviderKeyFamily[];
  /** Entries of porticoKeys.ts's PORTICO_ENTRIES: the same entry may be honoured by several providers. */
  readonly porticoKeys: readonly KeyEntry[];
}

/** Entry makers for the keys under one prefix, so a family reads `implemented("scheme", "...")`. */
export function entriesUnder(prefix: string) {
  const entry =
    (status: KeyStatus) =>
    (suffix: string, summary: string): KeyEntry => ({ key: prefix + suffix, status, summary });
  return { implemented: entry("implemented"), refused: entry("refused"), noop: entry("noop") };
}

/**
 * The keys of a family that Portico reads, by the name its parser knows each by: `[suffix, summary]`, where the
 * suffix may be a template. The one place such a key is spelled: the parser takes its keys (parserKeys) and the
 * catalog its implemented entries (implementedEntries) from it.
 */
export type ReadKeys = Readonly<Record<string, readonly [suffix: string, summary: string]>>;

/** Each read key in full, as the parser looks for it; a template up to its first placeholder (a prefix). */
export function parserKeys<T extends ReadKeys>(
  prefix: string,
  table: T,
): { readonly [K in keyof T]: string } {
  return Object.fromEntries(
    Object.entries(table).map(([name, [suffix]]) => [name, prefix + suffix.split("<")[0]]),
  ) as { readonly [K in keyof T]: string };
}

export function implementedEntries(prefix: string, table: ReadKeys): KeyEntry[] {
  return Object.values(table).map(([suffix, summary]) => ({
    key: prefix + suffix,
    status: "implemented",
    summary,
  }));
}
