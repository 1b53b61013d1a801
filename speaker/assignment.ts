// The announce decision: for every address, which node answers for it. Pure: the same Services, endpoint
// facts and eligible nodes give the same answer on every speaker, which is what lets each speaker decide
// alone, without coordination, and still agree with the others.
import type { AnnouncedService } from "./serviceView.ts";

export interface AddressAssignment {
  readonly address: string;
  /** The Services (namespace/name) that have this address and a ready endpoint, sorted. */
  readonly services: readonly string[];
  /** The elected node; undefined when no eligible node can serve the address. */
  readonly announcer: string | undefined;
}

export type Elect = (address: string, candidates: ReadonlySet<string>) => string | undefined;

/**
 * `eligible` = Ready, not excluded Nodes whose speaker is alive. A Service with no ready endpoint is not
 * announced at all (attracting traffic to a Service that cannot answer helps nobody). With policy Local only
 * nodes running a ready endpoint may announce, because kube-proxy drops Local traffic elsewhere.
 *
 * Services sharing an address (a sharing key) are announced by a node that serves all of them when one
 * exists (the intersection of their candidates); otherwise by one that serves at least one of them.
 */
export function assignAddresses(
  services: readonly AnnouncedService[],
  eligible: ReadonlySet<string>,
  elect: Elect,
): Map<string, AddressAssignment> {
  const byAddress = new Map<string, AnnouncedService[]>();
  for (const service of services) {
    if (!service.hasReadyEndpoint) continue;
    for (const address of service.addresses)
      byAddress.set(address, [...(byAddress.get(address) ?? []), service]);
  }
  const result = new Map<string, AddressAssignment>();
  for (const [address, sharing] of byAddress) {
    const candidateSets = sharing.map((service) =>
      service.local ? new Set([...service.endpointNodes].filter((n) => eligible.has(n))) : eligible,
    );
    let candidates = intersection(candidateSets);
    if (candidates.size === 0) candidates = new Set(candidateSets.flatMap((set) => [...set]));
    result.set(address, {
      address,
      services: sharing.map((s) => s.key).sort(),
      announcer: elect(address, candidates),
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

function intersection(sets: readonly ReadonlySet<string>[]): Set<string> {
  const [first, ...rest] = sets;
  if (!first) return new Set();
  return new Set([...first].filter((item) => rest.every((set) => set.has(item))));
}
