// The IPAddressPool custom resource (portico.io/IPAddressPool): its spec as users write it (the same shape
// as MetalLB's IPAddressPool, so a pool can be moved over by changing apiVersion), validation into a
// normalized Pool, and the questions the allocator asks of a pool: how big, does it hold this address,
// which addresses in order, may this Service use it.
import type { IPAddress, IPFamily } from "./address.ts";
import { ipFromValue, IP_FAMILIES } from "./address.ts";
import {
  isPlainObject,
  matchesLabelSelector,
  validateLabelSelector,
  type LabelSelector,
  type Labels,
} from "./labelSelector.ts";
import {
  buggyCount,
  formatRange,
  isBuggyIPv4,
  parseRangeEntry,
  rangeContains,
  rangeIntersection,
  rangeSize,
  type AddressRange,
} from "./range.ts";

export const POOL_API_GROUP = "portico.io";
export const POOL_KIND = "IPAddressPool";

export interface ServiceAllocation {
  priority?: number;
  namespaces?: string[];
  namespaceSelectors?: LabelSelector[];
  serviceSelectors?: LabelSelector[];
}

export interface IPAddressPoolSpec {
  addresses: string[];
  autoAssign?: boolean;
  avoidBuggyIPs?: boolean;
  serviceAllocation?: ServiceAllocation;
}

export interface Pool {
  readonly name: string;
  /** In the order the user listed them; allocation walks them in this order. */
  readonly ranges: readonly AddressRange[];
  readonly autoAssign: boolean;
  readonly avoidBuggyIPs: boolean;
  /** Lower is preferred; undefined sorts after every number. */
  readonly priority: number | undefined;
  readonly namespaces: readonly string[];
  readonly namespaceSelectors: readonly LabelSelector[];
  readonly serviceSelectors: readonly LabelSelector[];
}

export interface PoolProblem {
  /** JSON path of the offending field, e.g. "spec.addresses[1]". */
  readonly field: string;
  readonly message: string;
}

export type PoolParseResult = { ok: true; pool: Pool } | { ok: false; problems: PoolProblem[] };

const SPEC_FIELDS = ["addresses", "autoAssign", "avoidBuggyIPs", "serviceAllocation"];
const ALLOCATION_FIELDS = ["priority", "namespaces", "namespaceSelectors", "serviceSelectors"];

/** Validates a pool spec as read from the API (untyped JSON) and normalizes it. Never throws. */
export function parsePool(name: string, spec: unknown): PoolParseResult {
  const problems: PoolProblem[] = [];
  const problem = (field: string, message: string): void => void problems.push({ field, message });
  if (!isPlainObject(spec)) {
    return {
      ok: false,
      problems: [{ field: "spec", message: "spec must be an object with an addresses list" }],
    };
  }
  for (const key of Object.keys(spec)) {
    if (!SPEC_FIELDS.includes(key))
      problem(`spec.${key}`, `unknown field; the spec fields are ${SPEC_FIELDS.join(", ")}`);
  }
  const ranges = parseAddresses(spec.addresses, problem);
  const autoAssign = parseBoolean(spec.autoAssign, "spec.autoAssign", true, problem);
  const avoidBuggyIPs = parseBoolean(spec.avoidBuggyIPs, "spec.avoidBuggyIPs", false, problem);
  const allocation = parseServiceAllocation(spec.serviceAllocation, problem);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, pool: { name, ranges, autoAssign, avoidBuggyIPs, ...allocation } };
}

type Report = (field: string, message: string) => void;

function parseAddresses(raw: unknown, problem: Report): AddressRange[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    problem(
      "spec.addresses",
      'must list at least one CIDR ("192.168.10.0/24") or range ("192.168.10.10-192.168.10.20")',
    );
    return [];
  }
  const ranges: AddressRange[] = [];
  const fields: string[] = [];
  raw.forEach((entry: unknown, index) => {
    const field = `spec.addresses[${index}]`;
    if (typeof entry !== "string") return problem(field, "must be a string: a CIDR or a first-last range");
    const parsed = parseRangeEntry(entry);
    if (!parsed.ok) return problem(field, parsed.problem);
    // Overlapping entries would count addresses twice in the pool size; make the user merge them.
    ranges.forEach((earlier, earlierIndex) => {
      const overlap = rangeIntersection(earlier, parsed.value);
      if (overlap) {
        problem(
          field,
          `overlaps ${fields[earlierIndex]} (${formatRange(overlap)}); remove or merge one of them`,
        );
      }
    });
    ranges.push(parsed.value);
    fields.push(field);
  });
  return ranges;
}

function parseBoolean(raw: unknown, field: string, fallback: boolean, problem: Report): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === "boolean") return raw;
  problem(field, `must be true or false (got ${JSON.stringify(raw)})`);
  return fallback;
}

function parseServiceAllocation(
  raw: unknown,
  problem: Report,
): Pick<Pool, "priority" | "namespaces" | "namespaceSelectors" | "serviceSelectors"> {
  const none = { priority: undefined, namespaces: [], namespaceSelectors: [], serviceSelectors: [] };
  if (raw === undefined || raw === null) return none;
  const base = "spec.serviceAllocation";
  if (!isPlainObject(raw)) {
    problem(base, "must be an object with priority, namespaces, namespaceSelectors and/or serviceSelectors");
    return none;
  }
  for (const key of Object.keys(raw)) {
    if (!ALLOCATION_FIELDS.includes(key)) {
      problem(
        `${base}.${key}`,
        `unknown field; the serviceAllocation fields are ${ALLOCATION_FIELDS.join(", ")}`,
      );
    }
  }
  let priority: number | undefined;
  if (raw.priority !== undefined && raw.priority !== null) {
    if (typeof raw.priority === "number" && Number.isSafeInteger(raw.priority)) priority = raw.priority;
    else
      problem(
        `${base}.priority`,
        `must be an integer; lower numbers are preferred (got ${JSON.stringify(raw.priority)})`,
      );
  }
  let namespaces: string[] = [];
  if (raw.namespaces !== undefined && raw.namespaces !== null) {
    if (Array.isArray(raw.namespaces) && raw.namespaces.every((n) => typeof n === "string" && n !== "")) {
      namespaces = [...(raw.namespaces as string[])];
    } else {
      problem(`${base}.namespaces`, "must be a list of namespace names");
    }
  }
  return {
    priority,
    namespaces,
    namespaceSelectors: parseSelectors(raw.namespaceSelectors, `${base}.namespaceSelectors`, problem),
    serviceSelectors: parseSelectors(raw.serviceSelectors, `${base}.serviceSelectors`, problem),
  };
}

function parseSelectors(raw: unknown, field: string, problem: Report): LabelSelector[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problem(field, "must be a list of label selectors");
    return [];
  }
  const selectors: LabelSelector[] = [];
  raw.forEach((item: unknown, index) => {
    const checked = validateLabelSelector(item, `${field}[${index}]`);
    // Selector problems already carry their full path; report them against the list entry.
    for (const message of checked.problems) problem(`${field}[${index}]`, message);
    if (checked.selector) selectors.push(checked.selector);
  });
  return selectors;
}

export function poolFamilies(pool: Pool): IPFamily[] {
  return IP_FAMILIES.filter((family) => pool.ranges.some((range) => range.family === family));
}

/** Usable addresses in the pool (optionally of one family), after avoidBuggyIPs. Exact, any size. */
export function poolSize(pool: Pool, family?: IPFamily): bigint {
  let total = 0n;
  for (const range of pool.ranges) {
    if (family !== undefined && range.family !== family) continue;
    total += rangeSize(range) - (pool.avoidBuggyIPs ? buggyCount(range) : 0n);
  }
  return total;
}

/** Whether the pool may hand out this address (inside a range and not skipped by avoidBuggyIPs). */
export function poolContains(pool: Pool, address: Pick<IPAddress, "family" | "value">): boolean {
  if (pool.avoidBuggyIPs && isBuggyIPv4(address.family, address.value)) return false;
  return pool.ranges.some((range) => rangeContains(range, address.family, address.value));
}

/** Inside a range, whether or not avoidBuggyIPs lets it be used; for precise error messages. */
export function poolCovers(pool: Pool, address: Pick<IPAddress, "family" | "value">): boolean {
  return pool.ranges.some((range) => rangeContains(range, address.family, address.value));
}

/**
 * The pool's usable address values of one family, in allocation order, produced lazily: an IPv6 /64 is
 * walked one address at a time and never materialized.
 */
export function* poolValues(pool: Pool, family: IPFamily): Generator<bigint, void, undefined> {
  for (const at of poolPositions(pool, family)) yield at.value;
}

/** A place in a pool's allocation order: a range (its index in `ranges`) and a value inside it. */
export interface PoolPosition {
  readonly range: number;
  readonly value: bigint;
}

/** Like poolValues, with where each value is, from a place in the order on (or from the beginning). */
export function* poolPositions(
  pool: Pool,
  family: IPFamily,
  from?: PoolPosition,
): Generator<PoolPosition, void, undefined> {
  for (let r = from?.range ?? 0; r < pool.ranges.length; r++) {
    const range = pool.ranges[r]!;
    if (range.family !== family) continue;
    const first = from && r === from.range && from.value > range.first ? from.value : range.first;
    for (let value = first; value <= range.last; value++) {
      if (pool.avoidBuggyIPs && isBuggyIPv4(family, value)) continue;
      yield { range: r, value };
    }
  }
}

/** Like poolValues, as addresses with canonical text; all families when none is given. */
export function* poolAddresses(pool: Pool, family?: IPFamily): Generator<IPAddress, void, undefined> {
  for (const each of family === undefined ? poolFamilies(pool) : [family]) {
    for (const value of poolValues(pool, each)) yield ipFromValue(each, value);
  }
}

export interface ServiceIdentity {
  readonly namespace: string;
  readonly namespaceLabels: Labels;
  readonly labels: Labels;
}

/**
 * MetalLB's serviceAllocation semantics: the namespace must be listed in `namespaces` or match any of
 * `namespaceSelectors` (no restriction when both are empty), and the Service must match any of
 * `serviceSelectors` (no restriction when empty).
 */
export function poolAllowsService(pool: Pool, service: ServiceIdentity): boolean {
  const namespaceRestricted = pool.namespaces.length > 0 || pool.namespaceSelectors.length > 0;
  const namespaceOk =
    !namespaceRestricted ||
    pool.namespaces.includes(service.namespace) ||
    pool.namespaceSelectors.some((selector) => matchesLabelSelector(selector, service.namespaceLabels));
  return namespaceOk && serviceSelectorsAllow(pool, service.labels);
}

/** The Service half of serviceAllocation: it must match any of `serviceSelectors` (no restriction when empty). */
export function serviceSelectorsAllow(pool: Pick<Pool, "serviceSelectors">, labels: Labels): boolean {
  return (
    pool.serviceSelectors.length === 0 ||
    pool.serviceSelectors.some((selector) => matchesLabelSelector(selector, labels))
  );
}

/** Allocation preference: lower priority number first, pools without a priority last, then by name. */
export function comparePools(a: Pick<Pool, "name" | "priority">, b: Pick<Pool, "name" | "priority">): number {
  if (a.priority !== b.priority) {
    if (a.priority === undefined) return 1;
    if (b.priority === undefined) return -1;
    return a.priority - b.priority;
  }
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
