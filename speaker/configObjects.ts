// How the BGP mode's objects are read, one by one: each by its name (Portico's, cluster-scoped) or
// namespace/name (MetalLB's), and one that cannot be used as written is left out whole, with every reason said.
import { isPlainObject } from "../../shared/labelSelector.ts";
import type { PoolGroup } from "../pools.ts";

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
  /** What makes the object unusable; the reader adds to it. */
  readonly found: string[];
}

export function readObjects<T>(
  objects: readonly ConfigObject[],
  group: PoolGroup,
  kind: string,
  read: (entry: ObjectEntry) => T | undefined,
): { items: T[]; problems: string[] } {
  const items: T[] = [];
  const problems: string[] = [];
  for (const object of objects) {
    const name = object.metadata?.name;
    if (!name) continue;
    const key = group === "metallb.io" ? `${object.metadata?.namespace ?? ""}/${name}` : name;
    const entry = { name, key, spec: isPlainObject(object.spec) ? object.spec : {}, found: [] as string[] };
    const item = read(entry);
    if (entry.found.length > 0 || item === undefined)
      problems.push(...entry.found.map((p) => `${kind} ${key} (${group}) not used: ${p}`));
    else items.push(item);
  }
  return { items, problems };
}
