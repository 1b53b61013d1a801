// BGPAdvertisements: which pools are advertised over BGP, to which peers, from which nodes, with which path
// attributes, with MetalLB's fields and meaning (its BGPAdvertisement, metallb.io/v1beta1): an advertisement
// naming no pool and selecting none applies to every pool of its group; `peers` empty means every peer of the
// node; aggregationLength (default 32) and aggregationLengthV6 (default 128) widen the advertised prefix.
// Unlike the L2 mode there is no implicit advertisement: a pool no BGPAdvertisement selects is not
// advertised over BGP. Read leniently like the L2Advertisements: what cannot be read is said, and an
// advertisement with a value it cannot honour is left out entirely rather than applied differently.
import type { NodeSelector } from "../nodeSelectors.ts";
import { readSelectors, type PoolGroup } from "../pools.ts";
import { nameList, readObjects, type ConfigObject } from "../configObjects.ts";

export interface BgpAdvertisement {
  readonly key: string;
  readonly group: PoolGroup;
  readonly ipAddressPools: readonly string[];
  readonly ipAddressPoolSelectors: readonly NodeSelector[];
  readonly nodeSelectors: readonly NodeSelector[];
  readonly serviceSelectors: readonly NodeSelector[];
  /** Peer names; empty: every peer the node has. */
  readonly peers: readonly string[];
  readonly aggregationLength: number;
  readonly aggregationLengthV6: number;
  readonly localPref?: number;
  /** Standard communities as FRR writes them ("65000:100", "no-export"). */
  readonly communities: readonly string[];
  /** Large communities ("65000:1:2"), from MetalLB's "large:65000:1:2". */
  readonly largeCommunities: readonly string[];
}

const FIELDS = new Set([
  "ipAddressPools",
  "ipAddressPoolSelectors",
  "nodeSelectors",
  "serviceSelectors",
  "peers",
  "aggregationLength",
  "aggregationLengthV6",
  "localPref",
  "communities",
]);

/** The well-known communities of RFC 1997 under the names MetalLB and FRR accept. */
const WELL_KNOWN: Record<string, string> = {
  "no-export": "no-export",
  "no-advertise": "no-advertise",
  "local-as": "local-AS",
  "no-peer": "no-peer",
  blackhole: "blackhole",
  "graceful-shutdown": "graceful-shutdown",
};

export function readBgpAdvertisements(
  objects: readonly ConfigObject[],
  group: PoolGroup,
): { ads: BgpAdvertisement[]; problems: string[] } {
  const { items, problems } = readObjects(objects, group, "BGPAdvertisement", (entry) => {
    const { key, spec, found } = entry;
    for (const field of Object.keys(spec)) {
      if (!FIELDS.has(field)) found.push(`spec.${field} is not a BGPAdvertisement field Portico knows`);
    }
    const names = (field: string) => nameList(entry, field);
    const length = (field: string, max: number): number => {
      const raw = spec[field];
      if (raw === undefined) return max;
      if (typeof raw === "number" && Number.isInteger(raw) && raw >= 0 && raw <= max) return raw;
      found.push(`spec.${field} must be an integer from 0 to ${max}`);
      return max;
    };
    const localPref = spec.localPref;
    if (
      localPref !== undefined &&
      !(
        typeof localPref === "number" &&
        Number.isInteger(localPref) &&
        localPref >= 0 &&
        localPref <= 4294967295
      )
    )
      found.push("spec.localPref must be an integer from 0 to 4294967295");
    const communities: string[] = [];
    const largeCommunities: string[] = [];
    names("communities").forEach((text, index) => {
      const read = readCommunity(text);
      if (read.large) largeCommunities.push(read.large);
      else if (read.standard) communities.push(read.standard);
      else found.push(`spec.communities[${index}] "${text}": ${read.problem}`);
    });
    const selectors = (field: string) => readSelectors(spec[field], `spec.${field}`, (p) => found.push(p));
    const ad: BgpAdvertisement = {
      key,
      group,
      ipAddressPools: names("ipAddressPools"),
      ipAddressPoolSelectors: selectors("ipAddressPoolSelectors"),
      nodeSelectors: selectors("nodeSelectors"),
      serviceSelectors: selectors("serviceSelectors"),
      peers: names("peers"),
      aggregationLength: length("aggregationLength", 32),
      aggregationLengthV6: length("aggregationLengthV6", 128),
      communities,
      largeCommunities,
      ...(typeof localPref === "number" ? { localPref } : {}),
    };
    return ad;
  });
  return { ads: items, problems };
}

/** "65000:100", a well-known name, or "large:65000:1:2"; anything else is said, not guessed. */
export function readCommunity(text: string): { standard?: string; large?: string; problem?: string } {
  const value = text.trim();
  const well = WELL_KNOWN[value.toLowerCase()];
  if (well) return { standard: well };
  const standard = /^(\d+):(\d+)$/.exec(value);
  if (standard) {
    if (standard.slice(1).every((n) => Number(n) <= 65535)) return { standard: value };
    return { problem: "each half of a community is at most 65535" };
  }
  const large = /^large:(\d+):(\d+):(\d+)$/.exec(value);
  if (large) {
    if (large.slice(1).every((n) => Number(n) <= 4294967295)) return { large: large.slice(1).join(":") };
    return { problem: "each part of a large community is at most 4294967295" };
  }
  return {
    problem:
      'not a community: write "ASN:VALUE" (e.g. 65000:100), "large:ASN:X:Y" or a well-known name (no-export, no-advertise, local-AS, no-peer, blackhole, graceful-shutdown); named Community objects are not implemented',
  };
}
