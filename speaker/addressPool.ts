// Which pool a Service's address came from, so that pool's node selectors decide who announces it. The
// controller records no pool on the Service; the pool is the one whose ranges hold the address. Only when
// pools overlap (a mistake the controller reports in both pools' Overlaps condition) is there a choice, and
// the speaker then retraces the allocator's as far as it can see: the pool the Service names, else the most
// preferred pool that may serve the Service.
import { parseIP } from "../providers/metal/address.ts";
import type { Labels } from "../providers/metal/labelSelector.ts";
import { comparePools, serviceSelectorsAllow } from "../providers/metal/pool.ts";
import { rangeContains } from "../providers/metal/range.ts";
import { POOL_ANNOTATIONS } from "../providers/metal/request.ts";
import type { AnnouncePool } from "./pools.ts";

export interface ServiceFacts {
  readonly namespace: string;
  readonly labels: Labels;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The pool `address` belongs to, or undefined when it lies in none. */
export function poolOfAddress(
  address: string,
  service: ServiceFacts,
  pools: readonly AnnouncePool[],
): AnnouncePool | undefined {
  const parsed = parseIP(address);
  if (!parsed.ok) return undefined;
  const { family, value } = parsed.value;
  const containing = pools
    .filter((pool) => pool.ranges.some((range) => rangeContains(range, family, value)))
    .sort(comparePools);
  if (containing.length <= 1) return containing[0];
  const named = POOL_ANNOTATIONS.map((annotation) => service.annotations[annotation]).find(Boolean);
  return (
    containing.find((pool) => pool.name === named) ??
    containing.find((pool) => mayServe(pool, service)) ??
    containing[0]
  );
}

/**
 * The allocator's serviceAllocation rule, except that namespace selectors count as a match: the speaker
 * does not know namespace labels, and a pool it cannot rule out may have been the one used.
 */
function mayServe(pool: AnnouncePool, service: ServiceFacts): boolean {
  const namespaceOk =
    pool.selectsNamespaces || pool.namespaces.length === 0 || pool.namespaces.includes(service.namespace);
  return namespaceOk && serviceSelectorsAllow(pool, service.labels);
}
