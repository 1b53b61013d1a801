// The L2 mode's configuration as last read from the cache: Portico's and MetalLB's L2Advertisements, read again
// only when one of them or the pools changed. What cannot be read, and a MetalLB pool that no advertisement
// selects (and so nobody announces), is logged when it is read.
import { readAdvertisements, type AdvertisementObject, type L2Advertisement } from "./advertisements.ts";
import { AnnounceRules } from "./announceRules.ts";
import { describePool, type AnnouncePool } from "../pools.ts";
import type { Logger } from "pino";

export interface AdvertisementSources {
  advertisements(): readonly AdvertisementObject[];
  metallbAdvertisements(): readonly AdvertisementObject[];
}

export class AnnounceConfig {
  private readonly sources: AdvertisementSources;
  private readonly log: Logger;
  /** The pools and the objects' names and versions the advertisements were read from. */
  private last: { pools: readonly AnnouncePool[] | undefined; seen: string; ads: L2Advertisement[] } = {
    pools: undefined,
    seen: "",
    ads: [],
  };

  constructor(sources: AdvertisementSources, log: Logger) {
    this.sources = sources;
    this.log = log;
  }

  /** The advertisements, read against `pools` (the same array while the pools are unchanged: PoolConfig). */
  current(pools: readonly AnnouncePool[]): L2Advertisement[] {
    const [porticoAds, metallbAds] = [this.sources.advertisements(), this.sources.metallbAdvertisements()];
    const seen = [porticoAds, metallbAds]
      .map((objects) => objects.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).join(","))
      .join(";");
    if (seen === this.last.seen && pools === this.last.pools) return this.last.ads;
    const adReads = [
      readAdvertisements(porticoAds, "portico.io"),
      readAdvertisements(metallbAds, "metallb.io"),
    ];
    for (const { problems } of adReads) {
      for (const problem of problems) this.log.warn({ problem }, "configuration entry not understood");
    }
    const ads = adReads.flatMap((read) => read.ads);
    this.last = { pools, seen, ads };
    for (const key of new AnnounceRules(pools, ads, []).unadvertised()) {
      const pool = pools.find((p) => p.key === key)!;
      this.log.warn({ pool: key }, `${describePool(pool)} is not announced: no L2Advertisement selects it`);
    }
    return ads;
  }
}
