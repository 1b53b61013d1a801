// Which prefixes this node advertises to which of its peers, with which path attributes. In BGP mode every
// eligible node advertises (the routers spread traffic over all of them, ECMP), so unlike the L2 election each
// speaker decides for itself from facts every speaker shares:
// - the node is Ready and not excluded from load balancers, and not leaving (a speaker that stops withdraws);
// - a BGPAdvertisement selects the address's pool and the Service, and its nodeSelectors and the pool's match
//   the node;
// - externalTrafficPolicy Cluster: the Service has a ready endpoint anywhere; Local: one on this node (else
//   traffic sent here would be dropped).
import { familyBits, formatIP, parseIP, type IPFamily } from "../../shared/address.ts";
import { matchesLabelSelector, type Labels } from "../../shared/labelSelector.ts";
import { nodeMayAnnounce } from "../nodeSelectors.ts";
import { selectsPool, type AnnouncePool } from "../pools.ts";
import type { AnnouncedService } from "../serviceView.ts";
import type { BgpAdvertisement } from "./advertisements.ts";
import type { BgpPeer } from "./peers.ts";

export interface PathAttributes {
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
  readonly localPref?: number;
}

export interface AdvertisedPrefix {
  /** "198.51.100.10/32" */
  readonly prefix: string;
  readonly family: IPFamily;
  /** Peer key → what is attached to the prefix towards that peer. */
  readonly peers: ReadonlyMap<string, PathAttributes>;
  /** The Services whose addresses it carries (namespace/name). */
  readonly services: readonly string[];
}

export interface RouteInput {
  readonly node: string;
  readonly nodeLabels: Labels;
  /** Ready, not leaving (shared/nodeEligibility.ts), not stopping. */
  readonly eligible: boolean;
  /** The same for Services with externalTrafficPolicy Local, for which a cordoned node stays. */
  readonly eligibleForLocal: boolean;
  readonly services: readonly AnnouncedService[];
  readonly pools: readonly AnnouncePool[];
  readonly ads: readonly BgpAdvertisement[];
  /** The peers this node has sessions with. */
  readonly peers: readonly BgpPeer[];
}

/** Why a Service's address is not advertised from this node (for its status and `porticoctl`). */
export type NotAdvertised = "nodeNotEligible" | "noLocalEndpoint" | "noReadyEndpoint" | "noPeer";

export interface Routes {
  readonly prefixes: AdvertisedPrefix[];
  /** Addresses a BGPAdvertisement selects that this node does not advertise, and why. */
  readonly withheld: ReadonlyMap<string, NotAdvertised>;
  /** Conflicting attributes (two advertisements giving one prefix different local preferences). */
  readonly problems: string[];
}

export function bgpRoutes(input: RouteInput): Routes {
  const poolsByKey = new Map(input.pools.map((p) => [p.key, p] as const));
  const peerNames = new Map<string, BgpPeer[]>();
  for (const peer of input.peers) peerNames.set(peer.name, [...(peerNames.get(peer.name) ?? []), peer]);
  const byPrefix = new Map<string, { family: IPFamily; peers: Map<string, Attrs>; services: Set<string> }>();
  const withheld = new Map<string, NotAdvertised>();
  const problems: string[] = [];
  for (const service of input.services) {
    for (const address of service.addresses) {
      const pool = poolsByKey.get(service.pools.get(address) ?? "");
      if (!pool) continue;
      const ads = advertisementsFor(pool, service.labels, input.ads);
      if (ads.length === 0) continue;
      const reason = notAdvertised(input, service, pool, ads);
      if (reason) {
        withheld.set(address, reason);
        continue;
      }
      const parsed = parseIP(address);
      if (!parsed.ok) continue;
      let sent = false;
      for (const ad of ads) {
        if (!nodeMayAnnounce(ad.nodeSelectors, input.nodeLabels)) continue;
        const length = parsed.value.family === "IPv4" ? ad.aggregationLength : ad.aggregationLengthV6;
        const prefix = maskedPrefix(parsed.value.family, parsed.value.value, length);
        const targets = ad.peers.length === 0 ? input.peers : ad.peers.flatMap((n) => peerNames.get(n) ?? []);
        // A session carries its own address family only (MetalLB's default; dual-stack sessions are refused).
        for (const peer of targets.filter((p) => p.group === ad.group && p.family === parsed.value.family)) {
          const entry = byPrefix.get(prefix) ?? {
            family: parsed.value.family,
            peers: new Map<string, Attrs>(),
            services: new Set<string>(),
          };
          byPrefix.set(prefix, entry);
          entry.services.add(service.key);
          const attrs = entry.peers.get(peer.key) ?? { communities: new Set(), large: new Set() };
          entry.peers.set(peer.key, attrs);
          ad.communities.forEach((c) => attrs.communities.add(c));
          ad.largeCommunities.forEach((c) => attrs.large.add(c));
          if (ad.localPref !== undefined) {
            if (attrs.localPref !== undefined && attrs.localPref !== ad.localPref)
              problems.push(
                `${prefix} to peer ${peer.key}: BGPAdvertisements give local preferences ${attrs.localPref} and ${ad.localPref}; the higher is used`,
              );
            attrs.localPref = Math.max(attrs.localPref ?? 0, ad.localPref);
          }
          sent = true;
        }
      }
      if (!sent) withheld.set(address, "noPeer");
    }
  }
  const prefixes = [...byPrefix]
    .map(([prefix, entry]) => ({
      prefix,
      family: entry.family,
      services: [...entry.services].sort(),
      peers: new Map(
        [...entry.peers].sort(([a], [b]) => (a < b ? -1 : 1)).map(([peer, a]) => [peer, frozen(a)] as const),
      ),
    }))
    .sort((a, b) => comparePrefixes(a.prefix, b.prefix));
  return { prefixes, withheld, problems };
}

/** The pools of the given group a BGPAdvertisement selects, among the pools that exist. */
export function bgpSelectedPools(
  pools: readonly AnnouncePool[],
  ads: readonly BgpAdvertisement[],
): Set<string> {
  return new Set(pools.filter((pool) => ads.some((ad) => selectsPool(ad, pool))).map((pool) => pool.key));
}

function advertisementsFor(
  pool: AnnouncePool,
  serviceLabels: Labels,
  ads: readonly BgpAdvertisement[],
): BgpAdvertisement[] {
  return ads.filter(
    (ad) =>
      selectsPool(ad, pool) &&
      (ad.serviceSelectors.length === 0 ||
        ad.serviceSelectors.some((s) => s !== null && matchesLabelSelector(s, serviceLabels))),
  );
}

function notAdvertised(
  input: RouteInput,
  service: AnnouncedService,
  pool: AnnouncePool,
  ads: readonly BgpAdvertisement[],
): NotAdvertised | undefined {
  if (!(service.local ? input.eligibleForLocal : input.eligible)) return "nodeNotEligible";
  if (!nodeMayAnnounce(pool.nodeSelectors, input.nodeLabels)) return "nodeNotEligible";
  if (!ads.some((ad) => nodeMayAnnounce(ad.nodeSelectors, input.nodeLabels))) return "nodeNotEligible";
  if (!service.hasReadyEndpoint) return "noReadyEndpoint";
  if (service.local && !service.endpointNodes.has(input.node)) return "noLocalEndpoint";
  if (input.peers.length === 0) return "noPeer";
  return undefined;
}

interface Attrs {
  communities: Set<string>;
  large: Set<string>;
  localPref?: number;
}

function frozen(a: Attrs): PathAttributes {
  return {
    communities: [...a.communities].sort(),
    largeCommunities: [...a.large].sort(),
    ...(a.localPref !== undefined ? { localPref: a.localPref } : {}),
  };
}

export function maskedPrefix(family: IPFamily, value: bigint, length: number): string {
  const bits = familyBits(family);
  const hostBits = BigInt(bits - length);
  const masked = (value >> hostBits) << hostBits;
  return `${formatIP(family, masked)}/${length}`;
}

function comparePrefixes(a: string, b: string): number {
  const [pa, pb] = [parseIP(a.split("/")[0]!), parseIP(b.split("/")[0]!)];
  if (!pa.ok || !pb.ok) return a < b ? -1 : 1;
  if (pa.value.family !== pb.value.family) return pa.value.family === "IPv4" ? -1 : 1;
  if (pa.value.value !== pb.value.value) return pa.value.value < pb.value.value ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
