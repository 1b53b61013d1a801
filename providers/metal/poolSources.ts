// Pools come from two kinds: Portico's IPAddressPools (portico.io, cluster-scoped) and MetalLB's, read as they
// are (metallb.io/v1beta1, in MetalLB's namespace), so a cluster moves over from MetalLB without rewriting a
// manifest. They form one set, named as Services name them (metallb.io/address-pool); a name defined in both
// kinds is ambiguous, and Portico never picks one silently: both definitions are left out of allocation, and a
// Service either of them could concern is refused with a message naming both (the others are served as usual).
import { parseIP, type IPFamily } from "../../shared/address.ts";
import {
  parsePool,
  poolAllowsService,
  poolContains,
  poolFamilies,
  type Pool,
  type ServiceIdentity,
} from "../../shared/pool.ts";

export type PoolGroup = "portico.io" | "metallb.io";

export interface PoolObject {
  name: string;
  spec: unknown;
  /** Absent: Portico's own. */
  group?: PoolGroup;
  /** MetalLB's pools are namespaced. */
  namespace?: string;
}

/** A name defined by pools of both kinds, with each definition as far as it can be read. */
export interface DuplicatePool {
  readonly name: string;
  readonly definitions: readonly Pool[];
  readonly message: string;
}

/** How messages name a pool object: "IPAddressPool web (portico.io)", "IPAddressPool metallb-system/web (metallb.io)". */
export function describePoolObject(obj: PoolObject): string {
  const group = obj.group ?? "portico.io";
  return group === "metallb.io"
    ? `IPAddressPool ${obj.namespace ?? ""}/${obj.name} (metallb.io)`
    : `IPAddressPool ${obj.name} (portico.io)`;
}

/** Splits the objects into those to use and the names defined more than once. */
export function splitDuplicates(objects: readonly PoolObject[]): {
  unique: PoolObject[];
  duplicates: DuplicatePool[];
} {
  const byName = new Map<string, PoolObject[]>();
  for (const obj of objects) byName.set(obj.name, [...(byName.get(obj.name) ?? []), obj]);
  const unique: PoolObject[] = [];
  const duplicates: DuplicatePool[] = [];
  for (const [name, same] of byName) {
    if (same.length === 1) {
      unique.push(same[0]!);
      continue;
    }
    const definitions = same.flatMap((obj) => {
      const parsed = parsePool(name, withoutAnnouncement(obj.spec));
      return parsed.ok ? [parsed.pool] : [];
    });
    duplicates.push({
      name,
      definitions,
      message:
        `IPAddressPool name "${name}" is defined twice, as ${same.map(describePoolObject).join(" and ")}; ` +
        `Portico does not choose between them and uses neither: rename or delete one of them`,
    });
  }
  return { unique, duplicates };
}

/** The spec the allocator reads: announcement settings (Portico's pool nodeSelectors) are the speakers' business. */
export function withoutAnnouncement(spec: unknown): unknown {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) return spec;
  const { nodeSelectors: _announce, ...rest } = spec as Record<string, unknown>;
  return rest;
}

export interface ServiceFacts {
  readonly identity: ServiceIdentity;
  /** The pool the Service names, if any. */
  readonly pool?: string;
  /** What it holds now and what it asks for. */
  readonly addresses: readonly string[];
  /** The families it wants and does not hold yet: those an auto-assigning pool might serve. */
  readonly unservedFamilies: readonly IPFamily[];
}

/**
 * The ambiguous name this Service depends on, if any: it names the pool, holds or asks for an address in either
 * definition, or still needs an address that either definition could give it.
 */
export function duplicateConcerning(
  duplicates: readonly DuplicatePool[],
  service: ServiceFacts,
): DuplicatePool | undefined {
  const addresses = service.addresses.flatMap((text) => {
    const parsed = parseIP(text);
    return parsed.ok ? [parsed.value] : [];
  });
  return duplicates.find(
    (dup) =>
      dup.name === service.pool ||
      dup.definitions.some(
        (pool) =>
          addresses.some((address) => poolContains(pool, address)) ||
          (service.pool === undefined &&
            pool.autoAssign &&
            poolAllowsService(pool, service.identity) &&
            poolFamilies(pool).some((family) => service.unservedFamilies.includes(family))),
      ),
  );
}
