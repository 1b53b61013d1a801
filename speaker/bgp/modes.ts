// One set of pools, two ways to announce them. A pool is announced over ARP/NDP when an L2Advertisement selects
// it, and over BGP when a BGPAdvertisement does; both when both do. A Portico pool that no L2Advertisement
// selects is announced in L2 by default (as before advertisements existed) — unless a BGPAdvertisement selects
// it, which makes it a BGP-only pool: a user who writes only BGPAdvertisements gets no ARP answers beside them.
import type { L2Advertisement } from "../l2/advertisements.ts";
import { selectsPool, type AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";

/** The Services as the L2 mode sees them: without the addresses of BGP-only pools. */
export function l2Services(
  services: readonly AnnouncedService[],
  pools: readonly AnnouncePool[],
  l2Ads: readonly L2Advertisement[],
  bgpPools: ReadonlySet<string>,
): AnnouncedService[] {
  const bgpOnly = new Set(
    pools
      .filter((pool) => bgpPools.has(pool.key) && !l2Ads.some((ad) => selectsPool(ad, pool)))
      .map((p) => p.key),
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
