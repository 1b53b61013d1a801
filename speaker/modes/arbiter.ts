// One set of pools, two ways to announce them: which mode serves which pool, and so which Service addresses each
// mode is given. Pure. A pool is announced over ARP/NDP when an L2Advertisement selects it, and over BGP when a
// BGPAdvertisement does; both when both do. A Portico pool that no L2Advertisement selects is announced in L2 by
// default (as before advertisements existed) — unless a BGPAdvertisement selects it, which makes it a BGP-only
// pool: a user who writes only BGPAdvertisements gets no ARP answers beside them. The BGP mode is given every
// Service: its advertisements choose among them themselves (bgp/routes.ts), so there is nothing to take from it.
import type { AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";
import type { ModeName } from "./mode.ts";

/** The pools each mode's advertisements select (Mode.claims). */
export interface PoolClaims {
  readonly l2: ReadonlySet<string>;
  /** Absent when the speaker runs without the BGP mode. */
  readonly bgp?: ReadonlySet<string>;
}

/** The Services each mode serves, each without the addresses of pools the mode does not serve. */
export interface Shares {
  readonly l2: AnnouncedService[];
  readonly bgp: readonly AnnouncedService[];
}

/** The modes that announce a pool. */
export function servingModes(pool: string, claims: PoolClaims): ModeName[] {
  const bgp = claims.bgp?.has(pool) ?? false;
  const l2 = claims.l2.has(pool) || !bgp;
  return [...(l2 ? (["l2"] as const) : []), ...(bgp ? (["bgp"] as const) : [])];
}

/** Which Service addresses each mode serves. */
export function shareServices(
  services: readonly AnnouncedService[],
  pools: readonly AnnouncePool[],
  claims: PoolClaims,
): Shares {
  return { l2: l2Services(services, pools, claims), bgp: services };
}

/** The Services as the L2 mode sees them: without the addresses of BGP-only pools. */
function l2Services(
  services: readonly AnnouncedService[],
  pools: readonly AnnouncePool[],
  claims: PoolClaims,
): AnnouncedService[] {
  if (!claims.bgp) return [...services];
  const bgpOnly = new Set(
    pools.filter((pool) => !servingModes(pool.key, claims).includes("l2")).map((p) => p.key),
  );
  if (bgpOnly.size === 0) return [...services];
  const result: AnnouncedService[] = [];
  for (const service of services) {
    const addresses = service.addresses.filter((a) => !bgpOnly.has(service.pools.get(a) ?? ""));
    if (addresses.length === service.addresses.length) result.push(service);
    else if (addresses.length > 0) result.push({ ...service, addresses });
  }
  return result;
}
