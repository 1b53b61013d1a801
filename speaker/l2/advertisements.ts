// L2Advertisements: which pools are announced over ARP/NDP, from which nodes and on which interfaces, with
// MetalLB's semantics (its speaker's layer2 controller): an advertisement listing no pool by name or selector
// selects every pool; a pool no advertisement selects is not announced at all; of the advertisements selecting
// a pool, those whose serviceSelectors match the Service (all, when an advertisement has none) apply to it; a
// node matching any of their nodeSelectors may announce (none: every node); the winner answers on the union of
// the interfaces its matching advertisements name, or on every interface when one of them names none.
//
// Each kind selects pools of its own API group only: MetalLB's advertisements (metallb.io, namespaced) its
// IPAddressPools, Portico's (portico.io) Portico's pools. A blanket MetalLB advertisement — the usual MetalLB
// set-up — therefore never changes how Portico's pools are announced, and a Portico pool that no Portico
// advertisement selects is announced as before advertisements existed: by the nodes its own nodeSelectors
// match, on every interface. Read leniently, as pools are: an entry that cannot be read selects nothing.
import { matchesLabelSelector, type Labels } from "../../shared/labelSelector.ts";
import { nameList, readObjects, type ConfigObject } from "../configObjects.ts";
import { nodeMayAnnounce, type NodeSelector } from "../nodeSelectors.ts";
import { readSelectors, selectsPool, type PoolGroup } from "../pools.ts";

/** An L2Advertisement as the API server returns it. */
export type AdvertisementObject = ConfigObject;

export interface L2Advertisement {
  /** As users name it: `name` (Portico's, cluster-scoped) or `namespace/name` (MetalLB's). */
  readonly key: string;
  readonly group: PoolGroup;
  readonly ipAddressPools: readonly string[];
  readonly ipAddressPoolSelectors: readonly NodeSelector[];
  readonly nodeSelectors: readonly NodeSelector[];
  /** Empty: every interface the speaker announces on. */
  readonly interfaces: readonly string[];
  readonly serviceSelectors: readonly NodeSelector[];
}

/** What decides a pool's announcement; `ads` undefined for a Portico pool no Portico advertisement selects. */
export interface PoolAnnouncement {
  /** The pool's own nodeSelectors (Portico pools); they restrict in every case. */
  readonly nodeSelectors: readonly NodeSelector[];
  readonly ads: readonly L2Advertisement[] | undefined;
}

const SPEC_FIELDS = [
  "ipAddressPools",
  "ipAddressPoolSelectors",
  "nodeSelectors",
  "interfaces",
  "serviceSelectors",
];

export function readAdvertisements(
  objects: readonly AdvertisementObject[],
  group: PoolGroup,
): { ads: L2Advertisement[]; problems: string[] } {
  const read = readObjects(
    objects,
    group,
    "L2Advertisement",
    (entry): L2Advertisement => {
      const { key, spec, found } = entry;
      for (const field of Object.keys(spec)) {
        // Never ignored silently: a field Portico does not implement (MetalLB's preferredNodeSelectors) is said.
        if (!SPEC_FIELDS.includes(field))
          found.push(`spec.${field} is not implemented by Portico and has no effect`);
      }
      const selectors = (field: string) =>
        readSelectors(spec[field], `spec.${field}`, (problem) =>
          found.push(`${problem}; the entry selects nothing`),
        );
      return {
        key,
        group,
        ipAddressPools: nameList(entry, "ipAddressPools", "ignored: not a name"),
        ipAddressPoolSelectors: selectors("ipAddressPoolSelectors"),
        nodeSelectors: selectors("nodeSelectors"),
        interfaces: nameList(entry, "interfaces", "ignored: not a name"),
        serviceSelectors: selectors("serviceSelectors"),
      };
    },
    // Read leniently, as pools are: what cannot be read selects nothing, and the rest applies.
    "keep",
  );
  return { ads: read.items, problems: read.problems };
}

/** The rule for one pool given every advertisement. */
export function poolAnnouncement(
  pool: {
    readonly name: string;
    readonly group: PoolGroup;
    readonly labels: Labels;
    readonly nodeSelectors: readonly NodeSelector[];
  },
  ads: readonly L2Advertisement[],
): PoolAnnouncement {
  const selecting = ads.filter((ad) => selectsPool(ad, pool));
  const legacy = pool.group === "portico.io" && selecting.length === 0;
  return { nodeSelectors: pool.nodeSelectors, ads: legacy ? undefined : selecting };
}

/** The advertisements that apply to a Service of the pool: serviceSelectors empty, or one matches. */
export function adsForService(
  rule: PoolAnnouncement,
  serviceLabels: Labels,
): readonly L2Advertisement[] | undefined {
  return rule.ads?.filter(
    (ad) =>
      ad.serviceSelectors.length === 0 ||
      ad.serviceSelectors.some((s) => s !== null && matchesLabelSelector(s, serviceLabels)),
  );
}

/** Whether a node may announce the Service's address from this pool. */
export function nodeMayAnnounceFor(
  rule: PoolAnnouncement,
  ads: readonly L2Advertisement[] | undefined,
  nodeLabels: Labels,
): boolean {
  if (!nodeMayAnnounce(rule.nodeSelectors, nodeLabels)) return false;
  return ads === undefined || ads.some((ad) => nodeMayAnnounce(ad.nodeSelectors, nodeLabels));
}

/**
 * The interfaces the announcing node answers on: the union over the advertisements that apply and match the
 * node; undefined for every interface (no advertisements apply, or one of them names no interface).
 */
export function interfacesFor(
  ads: readonly L2Advertisement[] | undefined,
  nodeLabels: Labels,
): readonly string[] | undefined {
  if (ads === undefined) return undefined;
  const names = new Set<string>();
  for (const ad of ads) {
    if (!nodeMayAnnounce(ad.nodeSelectors, nodeLabels)) continue;
    if (ad.interfaces.length === 0) return undefined;
    for (const name of ad.interfaces) names.add(name);
  }
  return [...names].sort();
}
