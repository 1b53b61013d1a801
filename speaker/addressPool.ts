// Which pool a Service's address came from, so that pool's node selectors decide who announces it: the one
// whose ranges hold the address. Only when pools overlap (a mistake the controller reports in both pools'
// Overlaps condition) is there a choice, and then the controller's record on the Service settles it
// (portico.io/ip-allocated-from-pool, or MetalLB's metallb.io/ip-allocated-from-pool on Services MetalLB
// addressed): the named pool holding the address. Without a record (a Service addressed before the controller
// wrote them) the speaker retraces the allocator's choice as far as it can see, and says it guessed: the pool
// the Service asks for, else the most preferred pool that may serve the Service.
import { parseIP } from "../shared/address.ts";
import type { Labels } from "../shared/labelSelector.ts";
import { comparePools, serviceSelectorsAllow } from "../shared/pool.ts";
import { rangeContains } from "../shared/range.ts";
import {
  METALLB_POOL_RECORD_ANNOTATION,
  POOL_ANNOTATIONS,
  POOL_RECORD_ANNOTATION,
} from "../shared/request.ts";
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
  return findPool(address, service, pools)?.pool;
}

/** How the pool was found: the only one holding the address, the one recorded, or a guess among several. */
export type PoolSource = "only" | "recorded" | "guessed";

export function findPool(
  address: string,
  service: ServiceFacts,
  pools: readonly AnnouncePool[],
): { pool: AnnouncePool; source: PoolSource } | undefined {
  const parsed = parseIP(address);
  if (!parsed.ok) return undefined;
  const { family, value } = parsed.value;
  const containing = pools
    .filter((pool) => pool.ranges.some((range) => rangeContains(range, family, value)))
    .sort(comparePools);
  if (containing.length <= 1) return containing[0] && { pool: containing[0], source: "only" };
  const recorded = recordedPools(service.annotations);
  const fromRecord = containing.find((pool) => recorded.includes(pool.name));
  if (fromRecord) return { pool: fromRecord, source: "recorded" };
  const named = POOL_ANNOTATIONS.map((annotation) => service.annotations[annotation]).find(Boolean);
  const guess =
    containing.find((pool) => pool.name === named) ??
    containing.find((pool) => mayServe(pool, service)) ??
    containing[0]!;
  return { pool: guess, source: "guessed" };
}

/** The pool names recorded on the Service: Portico's record, else MetalLB's. */
export function recordedPools(annotations: Readonly<Record<string, string>>): string[] {
  const text = annotations[POOL_RECORD_ANNOTATION] ?? annotations[METALLB_POOL_RECORD_ANNOTATION] ?? "";
  return text
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
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
