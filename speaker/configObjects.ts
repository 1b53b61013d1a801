// How the speaker's configuration objects (pools' advertisements, BGP peers) are read, one by one: each by its
// name (Portico's, cluster-scoped) or namespace/name (MetalLB's), every problem said with the object it is in.
// Two ways to treat an object with problems, as MetalLB's own modes do: the BGP mode leaves it out whole (a peer
// or advertisement applied differently from how it is written would be worse than none); the L2 mode keeps it
// with what could be read (an unreadable selector selects nothing), as pools are read.
import { isPlainObject } from "../shared/labelSelector.ts";
import { list, type PoolGroup } from "./pools.ts";

export interface ConfigObject {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
  };
  readonly spec?: unknown;
}

export interface ObjectEntry {
  readonly name: string;
  readonly key: string;
  readonly spec: Record<string, unknown>;
  /** What is wrong with the object; the reader adds to it. */
  readonly found: string[];
}

export function readObjects<T>(
  objects: readonly ConfigObject[],
  group: PoolGroup,
  kind: string,
  read: (entry: ObjectEntry) => T | undefined,
  problems: "drop" | "keep" = "drop",
): { items: T[]; problems: string[] } {
  const items: T[] = [];
  const said: string[] = [];
  for (const object of objects) {
    const name = object.metadata?.name;
    if (!name) continue;
    const key = group === "metallb.io" ? `${object.metadata?.namespace ?? ""}/${name}` : name;
    const entry = { name, key, spec: isPlainObject(object.spec) ? object.spec : {}, found: [] as string[] };
    const item = read(entry);
    const keep = item !== undefined && (problems === "keep" || entry.found.length === 0);
    const heading = keep ? `${kind} ${key} (${group}):` : `${kind} ${key} (${group}) not used:`;
    said.push(...entry.found.map((p) => `${heading} ${p}`));
    if (keep) items.push(item);
  }
  return { items, problems: said };
}

/** A field's list of names; an entry that is not one is said (`wording` after its path) and left out. */
export function nameList(entry: ObjectEntry, field: string, wording = "is not a name"): string[] {
  return list(entry.spec[field]).filter((value, index) => {
    if (typeof value === "string" && value !== "") return true;
    entry.found.push(`spec.${field}[${index}] ${wording}`);
    return false;
  }) as string[];
}
