// The announce decision: for every address, which node answers for it. Pure: the same Services, endpoint
// facts, pools and eligible nodes give the same answer on every speaker, which is what lets each speaker
// decide alone, without coordination, and still agree with the others.
import type { AnnouncedService } from "../serviceView.ts";

export interface AddressAssignment {
  readonly address: string;
  /** The Services (namespace/name) that have this address and a ready endpoint, sorted. */
  readonly services: readonly string[];
  /** The pool the address came from; undefined when it lies in no pool. */
  readonly pool: string | undefined;
  /** The elected node; undefined when no eligible node can serve the address. */
  readonly announcer: string | undefined;
  /**
   * Only when the pool's node selectors are why nobody announces (some node could serve the address, none
   * of those matches): the node that would announce it without them, the one that reports it.
   */
  readonly unmatched?: { readonly reporter: string };
}

export type Elect = (address: string, candidates: ReadonlySet<string>) => string | undefined;

/**
 * The nodes that may announce, by the Services' traffic policy (cordoned nodes stay for Local:
 * shared/nodeEligibility.ts), or one set for both.
 */
export type Eligible =
  ReadonlySet<string> | { readonly Cluster: ReadonlySet<string>; readonly Local: ReadonlySet<string> };

/**
 * The nodes that may announce the Service's address from `pool` (its nodeSelectors, and the L2Advertisements
 * that apply to the Service); undefined when every node may.
 */
export type PoolNodes = (pool: string, service: AnnouncedService) => ReadonlySet<string> | undefined;

/**
 * `eligible` = the Nodes that may carry traffic (Ready, not leaving) whose speaker is alive. A Service with no ready endpoint is not
 * announced at all (attracting traffic to a Service that cannot answer helps nobody). With policy Local only
 * nodes running a ready endpoint may announce, because kube-proxy drops Local traffic elsewhere. Of those,
 * only nodes the address's pool allows take part in the election.
 *
 * Services sharing an address (a sharing key) are announced by a node that serves all of them when one
 * exists (the intersection of their candidates); otherwise by one that serves at least one of them.
 */
export function assignAddresses(
  services: readonly AnnouncedService[],
  eligible: Eligible,
  elect: Elect,
  poolNodes: PoolNodes = () => undefined,
): Map<string, AddressAssignment> {
  const byAddress = new Map<string, AnnouncedService[]>();
  for (const service of services) {
    if (!service.hasReadyEndpoint) continue;
    for (const address of service.addresses)
      byAddress.set(address, [...(byAddress.get(address) ?? []), service]);
  }
  const result = new Map<string, AddressAssignment>();
  for (const [address, sharing] of byAddress) {
    const cluster = "Cluster" in eligible ? eligible.Cluster : eligible;
    const local = "Local" in eligible ? eligible.Local : eligible;
    const serving = sharing.map((service) =>
      service.local ? new Set([...service.endpointNodes].filter((n) => local.has(n))) : cluster,
    );
    const pools = sharing.map((service) => service.pools.get(address));
    const allowed = serving.map((nodes, i) => {
      const pool = pools[i];
      const permitted = pool === undefined ? undefined : poolNodes(pool, sharing[i]!);
      return permitted ? new Set([...nodes].filter((n) => permitted.has(n))) : nodes;
    });
    const announcer = elect(address, preferCommon(allowed));
    const unrestricted = announcer === undefined ? preferCommon(serving) : new Set<string>();
    const reporter = unrestricted.size > 0 ? elect(address, unrestricted) : undefined;
    result.set(address, {
      address,
      services: sharing.map((s) => s.key).sort(),
      pool: pools.find((pool) => pool !== undefined),
      announcer,
      ...(reporter === undefined ? {} : { unmatched: { reporter } }),
    });
  }
  return result;
}

/** The addresses `node` must answer for, sorted. */
export function addressesOf(node: string, assignments: ReadonlyMap<string, AddressAssignment>): string[] {
  return [...assignments.values()]
    .filter((a) => a.announcer === node)
    .map((a) => a.address)
    .sort();
}

/** The nodes in every set, or when there are none, the nodes in any. */
function preferCommon(sets: readonly ReadonlySet<string>[]): ReadonlySet<string> {
  const [first, ...rest] = sets;
  if (!first) return new Set();
  const common = new Set([...first].filter((item) => rest.every((set) => set.has(item))));
  return common.size > 0 ? common : new Set(sets.flatMap((set) => [...set]));
}
