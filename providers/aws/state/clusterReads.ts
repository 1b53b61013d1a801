// The answers the AWS provider keeps between passes about what a Service's NLB is built from, in one place, so
// that what is kept, for how long, and when it is all dropped is decided here rather than by each reader. The
// readers (network/subnets.ts, securityGroups/backendGroups.ts, prefixLists.ts, userGroups.ts,
// listeners/certificateCheck.ts) make the EC2 and ACM calls; they keep nothing themselves. One holder per provider,
// made by the resolver (resolve.ts), whose forget() on a new leadership term drops every answer at once: another
// leader may have changed any of them in between.
import type { Network } from "../model.ts";
import type { BackendGroupAnswer, VpcCidrs } from "../securityGroups/backendGroups.ts";
import type { PrefixListWeight } from "../securityGroups/ruleLimit.ts";
import { AgedReads } from "./agedReads.ts";
import { CLUSTER_CACHE_MS } from "./cacheAge.ts";

/**
 * The one exception to clusterCacheMs(): what a Service names by annotation (the security groups, managed prefix
 * lists and certificates it names) is not among the shared reads that cacheAge.ts lets a pass a user waits for
 * take ten minutes old. It is kept one minute whoever asks, so a change to what the Service names (a certificate
 * replaced, a group re-tagged, a list resized) is seen within a minute.
 */
const NAMED_BY_SERVICE = { maxAgeMs: () => CLUSTER_CACHE_MS };

export class ClusterReads {
  /** A scheme's discovered subnets, or the subnets a Service names (key: role:<scheme> or named:<sorted names>). */
  readonly subnets = new AgedReads<Network>();
  /** Each target's own security group, or why it has none (key: <vpc>/<instance ID or pod IP>). */
  readonly backendGroups = new AgedReads<BackendGroupAnswer>();
  /** A VPC's CIDRs, for an internal NLB without a group of its own (key: the VPC's ID). */
  readonly vpcCidrs = new AgedReads<VpcCidrs>();
  /** What each managed prefix list weighs in a group's rule quota (key: the sorted list IDs). */
  readonly prefixLists = new AgedReads<Map<string, PrefixListWeight>>(NAMED_BY_SERVICE);
  /** The IDs of the security groups a Service names (key: <vpc>/<names or IDs as given>). */
  readonly userGroups = new AgedReads<string[]>(NAMED_BY_SERVICE);
  /** ACM certificates found issued (key: the ARN); one not issued is not kept, and is checked again. */
  readonly certificates = new AgedReads<void>(NAMED_BY_SERVICE);

  /** Nothing kept is trusted any more (a new leadership term). */
  forget(): void {
    for (const reads of [
      this.subnets,
      this.backendGroups,
      this.vpcCidrs,
      this.prefixLists,
      this.userGroups,
      this.certificates,
    ])
      reads.forget();
  }
}
