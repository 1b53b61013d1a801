// How old a cached answer about what the cluster's Services share may be: the subnets, the nodes' and pods'
// security groups, the shared backend rules, the index of the Services' own security groups. Each is one read for
// the whole cluster (EC2 scans the region's groups for some of them), and Portico knows its own writes to them.
// A background pass (the periodic resync, orphan collection) reads again once its copy is a minute old, so drift
// made outside Portico is found within a resync period; a pass someone waits for (a new Service, an endpoint
// change) takes a copy up to ten minutes old rather than paying, and waiting, for the whole cluster's read.
// What an old copy can miss is caught by the writes themselves: a group or target group made by another hand
// answers "duplicate" (and is then read), a rule already there is left as it is.
import { currentPriority } from "../../priority.ts";

export const CLUSTER_CACHE_MS = 60_000;
export const CLUSTER_CACHE_FOR_USERS_MS = 600_000;

/** The age past which the cluster's shared reads are read again by the pass now running. */
export function clusterCacheMs(): number {
  return currentPriority() === "background" ? CLUSTER_CACHE_MS : CLUSTER_CACHE_FOR_USERS_MS;
}
