// The IPAddressPools as the speaker reads them: where each pool's addresses lie, which Services it serves (to
// tell overlapping pools apart) and which nodes may announce it. Read leniently, entry by entry: a pool the
// controller refuses as invalid may have handed out its addresses while it was valid, and its node selectors
// must keep applying to them, so whatever can be read is kept and the rest reported.
import {
  isPlainObject,
  matchesLabelSelector,
  validateLabelSelector,
  type Labels,
  type LabelSelector,
} from "../shared/labelSelector.ts";
import { parseRangeEntry, type AddressRange } from "../shared/range.ts";
import type { NodeSelector } from "./nodeSelectors.ts";

export interface PoolObject {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec?: unknown;
}

/** Portico's own IPAddressPools, or MetalLB's (metallb.io/v1beta1, read as they are). */
export type PoolGroup = "portico.io" | "metallb.io";

export interface AnnouncePool {
  /** The name Services and advertisements use. */
  readonly name: string;
  /** Unique among all pools: the name (Portico's), or namespace/name (MetalLB's), as metrics and Events say. */
  readonly key: string;
  readonly group: PoolGroup;
  /** What advertisements' ipAddressPoolSelectors match. */
  readonly labels: Readonly<Record<string, string>>;
  readonly ranges: readonly AddressRange[];
  /** As in the allocator: lower is preferred, undefined after every number. */
  readonly priority: number | undefined;
  readonly namespaces: readonly string[];
  /** The speaker does not watch Namespaces, so it only knows whether such selectors exist. */
  readonly selectsNamespaces: boolean;
  readonly serviceSelectors: readonly LabelSelector[];
  readonly nodeSelectors: readonly NodeSelector[];
}

export interface ReadPools {
  readonly pools: AnnouncePool[];
  /** One sentence per entry that could not be read, naming the pool and field. */
  readonly problems: string[];
}

export function readPools(objects: readonly PoolObject[], group: PoolGroup = "portico.io"): ReadPools {
  const pools: AnnouncePool[] = [];
  const problems: string[] = [];
  for (const object of objects) {
    const name = object.metadata?.name;
    if (!name) continue;
    const key = group === "metallb.io" ? `${object.metadata?.namespace ?? ""}/${name}` : name;
    const report = (message: string) => problems.push(`${describePool({ key, group })}: ${message}`);
    const spec = isPlainObject(object.spec) ? object.spec : {};
    const allocation = isPlainObject(spec.serviceAllocation) ? spec.serviceAllocation : {};
    const namespaceSelectors = list(allocation.namespaceSelectors);
    pools.push({
      name,
      key,
      group,
      labels: object.metadata?.labels ?? {},
      ranges: readRanges(spec.addresses, report),
      priority: Number.isSafeInteger(allocation.priority) ? (allocation.priority as number) : undefined,
      namespaces: list(allocation.namespaces).filter((n): n is string => typeof n === "string"),
      selectsNamespaces: namespaceSelectors.length > 0,
      // Service selectors only break ties between overlapping pools; an unreadable one is left out.
      serviceSelectors: readSelectors(
        allocation.serviceSelectors,
        "spec.serviceAllocation.serviceSelectors",
        (problem) => report(`${problem}; the selector is left out`),
      ).filter((s): s is LabelSelector => s !== null),
      // MetalLB's pools have no nodeSelectors: its L2Advertisements carry them.
      nodeSelectors:
        group === "portico.io"
          ? readSelectors(spec.nodeSelectors, "spec.nodeSelectors", (problem) =>
              report(`${problem}; the entry selects no node`),
            )
          : [],
    });
  }
  return { pools, problems };
}

export function list(raw: unknown): unknown[] {
  return Array.isArray(raw) ? raw : [];
}

function readRanges(raw: unknown, report: (message: string) => void): AddressRange[] {
  const ranges: AddressRange[] = [];
  list(raw).forEach((entry, index) => {
    const parsed = typeof entry === "string" ? parseRangeEntry(entry) : undefined;
    if (parsed?.ok) ranges.push(parsed.value);
    else report(`spec.addresses[${index}] ignored: ${parsed?.problem ?? "not a string"}`);
  });
  return ranges;
}

/** Each entry as a selector, or null where it cannot be read. */
export function readSelectors(
  raw: unknown,
  field: string,
  report: (message: string) => void,
): (LabelSelector | null)[] {
  return list(raw).map((entry, index) => {
    const checked = validateLabelSelector(entry, `${field}[${index}]`);
    if (checked.selector) return checked.selector;
    for (const problem of checked.problems) report(problem);
    return null;
  });
}

/** How logs and Events name a pool: "IPAddressPool web", or "IPAddressPool metallb-system/web (metallb.io)". */
export function describePool(pool: { readonly key: string; readonly group: PoolGroup }): string {
  return pool.group === "portico.io" ? `IPAddressPool ${pool.key}` : `IPAddressPool ${pool.key} (metallb.io)`;
}

/**
 * Whether an advertisement (L2 or BGP) applies to a pool: one naming no pool and selecting none applies to every
 * pool of its group.
 */
export function selectsPool(
  ad: {
    readonly group: PoolGroup;
    readonly ipAddressPools: readonly string[];
    readonly ipAddressPoolSelectors: readonly (NodeSelector | null)[];
  },
  pool: { readonly name: string; readonly group: PoolGroup; readonly labels: Labels },
): boolean {
  if (ad.group !== pool.group) return false;
  if (ad.ipAddressPools.length === 0 && ad.ipAddressPoolSelectors.length === 0) return true;
  return (
    ad.ipAddressPools.includes(pool.name) ||
    ad.ipAddressPoolSelectors.some((s) => s !== null && matchesLabelSelector(s, pool.labels))
  );
}
