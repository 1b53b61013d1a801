// The announcement configuration as last read from the cache: Portico's and MetalLB's IPAddressPools and
// L2Advertisements, read again only when one of the objects changed. What cannot be read, and a MetalLB pool
// that no advertisement selects (and so nobody announces), is logged when it is read.
import { readAdvertisements, type L2Advertisement } from "./advertisements.ts";
import { AnnounceRules } from "./announceRules.ts";
import type { KubeCache } from "../kube/cache.ts";
import { describePool, readPools, type AnnouncePool } from "../pools.ts";
import type { Logger } from "pino";

export class AnnounceConfig {
  private readonly cache: KubeCache;
  private readonly log: Logger;
  /** The objects' names and versions the pools and advertisements were read from. */
  private last: { seen: string; pools: AnnouncePool[]; ads: L2Advertisement[] } = {
    seen: "",
    pools: [],
    ads: [],
  };

  constructor(cache: KubeCache, log: Logger) {
    this.cache = cache;
    this.log = log;
  }

  current(): { pools: AnnouncePool[]; ads: L2Advertisement[] } {
    const sources = [
      this.cache.pools(),
      this.cache.metallbPoolObjects(),
      this.cache.advertisements(),
      this.cache.metallbAdvertisements(),
    ] as const;
    const seen = sources
      .map((objects) => objects.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).join(","))
      .join(";");
    if (seen === this.last.seen) return this.last;
    const [porticoPools, metallbPools, porticoAds, metallbAds] = sources;
    const reads = [readPools(porticoPools, "portico.io"), readPools(metallbPools, "metallb.io")] as const;
    const adReads = [
      readAdvertisements(porticoAds, "portico.io"),
      readAdvertisements(metallbAds, "metallb.io"),
    ];
    for (const { problems } of [...reads, ...adReads]) {
      for (const problem of problems) this.log.warn({ problem }, "configuration entry not understood");
    }
    const pools = reads.flatMap((read) => read.pools);
    const ads = adReads.flatMap((read) => read.ads);
    this.last = { seen, pools, ads };
    for (const key of new AnnounceRules(pools, ads, []).unadvertised()) {
      const pool = pools.find((p) => p.key === key)!;
      this.log.warn({ pool: key }, `${describePool(pool)} is not announced: no L2Advertisement selects it`);
    }
    return this.last;
  }
}
