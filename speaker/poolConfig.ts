// The IPAddressPools as last read from the cache, Portico's and MetalLB's, read again only when one of them
// changed: the facts every mode announces from. What cannot be read is logged when it is read. (Which pools each
// mode announces is the modes' own configuration: speaker/l2/announceConfig.ts, speaker/bgp/.)
import type { Logger } from "pino";
import { readPools, type AnnouncePool, type PoolObject } from "./pools.ts";

export interface PoolSources {
  pools(): readonly PoolObject[];
  metallbPoolObjects(): readonly PoolObject[];
}

export class PoolConfig {
  private readonly sources: PoolSources;
  private readonly log: Logger;
  /** The objects' names and versions the pools were read from. */
  private last: { seen: string; pools: AnnouncePool[] } = { seen: "", pools: [] };

  constructor(sources: PoolSources, log: Logger) {
    this.sources = sources;
    this.log = log;
  }

  current(): AnnouncePool[] {
    const porticoPools = this.sources.pools();
    const metallbPools = this.sources.metallbPoolObjects();
    const seen = [porticoPools, metallbPools]
      .map((objects) => objects.map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).join(","))
      .join(";");
    if (seen === this.last.seen) return this.last.pools;
    const reads = [readPools(porticoPools, "portico.io"), readPools(metallbPools, "metallb.io")] as const;
    for (const { problems } of reads) {
      for (const problem of problems) this.log.warn({ problem }, "configuration entry not understood");
    }
    this.last = { seen, pools: reads.flatMap((read) => read.pools) };
    return this.last.pools;
  }
}
