// The announce rules of one moment: for each pool (by key), which nodes may announce a Service's address and
// on which interfaces the announcing node answers, from the pools' own nodeSelectors and the L2Advertisements
// (advertisements.ts). Node sets are computed once per distinct set of applying advertisements, not per
// Service, so thousands of Services of one pool cost one pass over the nodes.
import type { V1Node } from "@kubernetes/client-node";
import type { Labels } from "../../shared/labelSelector.ts";
import {
  adsForService,
  interfacesFor,
  nodeMayAnnounceFor,
  poolAnnouncement,
  type L2Advertisement,
  type PoolAnnouncement,
} from "./advertisements.ts";
import type { AddressAssignment } from "./assignment.ts";
import type { AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";

/** Why nobody may announce an address of a pool: no node matches, or no advertisement selects it. */
export type Unannounced = "noMatchingNode" | "noAdvertisement";

export class AnnounceRules {
  private readonly rules = new Map<string, PoolAnnouncement>();
  private readonly labelsByNode = new Map<string, Labels>();
  private readonly memo = new Map<string, ReadonlySet<string> | undefined>();

  constructor(pools: readonly AnnouncePool[], ads: readonly L2Advertisement[], nodes: readonly V1Node[]) {
    for (const pool of pools) this.rules.set(pool.key, poolAnnouncement(pool, ads));
    for (const node of nodes) {
      const name = node.metadata?.name;
      if (name) this.labelsByNode.set(name, node.metadata?.labels ?? {});
    }
  }

  /** The nodes that may announce the Service's address from `pool`; undefined: every node. */
  allowedNodes(pool: string, serviceLabels: Labels): ReadonlySet<string> | undefined {
    const rule = this.rules.get(pool);
    if (!rule) return undefined;
    const ads = adsForService(rule, serviceLabels);
    if (ads === undefined && rule.nodeSelectors.length === 0) return undefined;
    const memoKey = `${pool}\n${ads?.map((ad) => `${ad.group}/${ad.key}`).join("\n") ?? "*"}`;
    if (this.memo.has(memoKey)) return this.memo.get(memoKey);
    const allowed = new Set<string>();
    for (const [name, labels] of this.labelsByNode) {
      if (nodeMayAnnounceFor(rule, ads, labels)) allowed.add(name);
    }
    this.memo.set(memoKey, allowed);
    return allowed;
  }

  /** The interfaces `node` answers on for the Service's address from `pool`; undefined: every one. */
  interfaces(pool: string, serviceLabels: Labels, node: string): readonly string[] | undefined {
    const rule = this.rules.get(pool);
    if (!rule) return undefined;
    return interfacesFor(adsForService(rule, serviceLabels), this.labelsByNode.get(node) ?? {});
  }

  /**
   * Where `node` answers for an address it won: the union over the Services sharing it (each restricted by
   * the advertisements that apply to it); undefined for every interface.
   */
  interfacesOf(
    assignment: Pick<AddressAssignment, "address" | "services">,
    announced: readonly AnnouncedService[],
    node: string,
  ): readonly string[] | undefined {
    const names = new Set<string>();
    for (const service of announced) {
      if (!assignment.services.includes(service.key)) continue;
      const pool = service.pools.get(assignment.address);
      if (pool === undefined) return undefined;
      const only = this.interfaces(pool, service.labels, node);
      if (only === undefined) return undefined;
      only.forEach((name) => names.add(name));
    }
    return [...names].sort();
  }

  /** Why an address of `pool` that nobody announces is not announced. */
  reason(pool: string, serviceLabels: Labels): Unannounced {
    const rule = this.rules.get(pool);
    const ads = rule ? adsForService(rule, serviceLabels) : undefined;
    return ads !== undefined && ads.length === 0 ? "noAdvertisement" : "noMatchingNode";
  }

  /** Pools no advertisement selects, whose addresses nobody announces (MetalLB's pools only). */
  unadvertised(): string[] {
    return [...this.rules].filter(([, rule]) => rule.ads?.length === 0).map(([key]) => key);
  }
}
