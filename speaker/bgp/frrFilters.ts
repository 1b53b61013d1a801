// Which prefix goes to which peer with which path attributes, in FRR's terms. FRR applies a prefix-list entry
// slowly (each one makes bgpd and zebra walk their tables: 1,000 entries take ~17 s on one core, against ~1 s
// for 1,000 `network` statements), so prefix-lists are kept for the exceptions only:
// - a prefix every peer of its family gets with the same attributes (the usual case) carries its attributes
//   from its origin: `network P route-map portico-set-<hash>`, or no route-map when it has none;
// - a prefix that only some peers get, or that gets different attributes per peer, goes out through each
//   peer's route-map: permitted (with its attributes) to the peers that get it, denied to the others.
// Each peer's inbound route-map refuses every route: the speaker announces, it never learns routes.
import { createHash } from "node:crypto";
import type { IPFamily } from "../../shared/address.ts";
import type { BgpPeer } from "./peers.ts";
import type { AdvertisedPrefix, PathAttributes } from "./routes.ts";

export interface Filters {
  /** Each prefix's origin route-map, when it has one. */
  readonly origin: ReadonlyMap<string, string>;
  /** prefix-lists and route-maps, before `router bgp`. */
  readonly lines: string[];
}

/** Route-map and prefix-list names: letters, digits and dashes only, stable for a peer. */
export function mapName(peer: BgpPeer): string {
  return `portico-${peer.address.replace(/[.:]/g, "-")}`;
}

export function planFilters(peers: readonly BgpPeer[], prefixes: readonly AdvertisedPrefix[]): Filters {
  const origin = new Map<string, string>();
  const originMaps = new Map<string, PathAttributes>();
  const special: AdvertisedPrefix[] = [];
  for (const p of prefixes) {
    const ofFamily = peers.filter((peer) => peer.family === p.family).map((peer) => peer.key);
    const attrs = [...p.peers.values()];
    const everyPeer = ofFamily.length === p.peers.size && ofFamily.every((key) => p.peers.has(key));
    const same = attrs.every((a) => attributeKey(a) === attributeKey(attrs[0]!));
    if (!everyPeer || !same) {
      special.push(p);
      continue;
    }
    if (attrs.length === 0 || isPlain(attrs[0]!)) continue;
    const name = `portico-set-${hash(attributeKey(attrs[0]!))}`;
    originMaps.set(name, attrs[0]!);
    origin.set(p.prefix, name);
  }
  const lines: string[] = [];
  for (const [name, attrs] of [...originMaps].sort(([a], [b]) => (a < b ? -1 : 1)))
    lines.push(`route-map ${name} permit 10`, ...sets(attrs, false), "exit", "!");
  for (const family of ["IPv4", "IPv6"] as const) {
    const list = specialList(family);
    special
      .filter((p) => p.family === family)
      .forEach((p, i) =>
        lines.push(`${ip(family)} prefix-list ${list} seq ${(i + 1) * 5} permit ${p.prefix}`),
      );
  }
  for (const peer of peers) lines.push(...peerMaps(peer, special));
  return { origin, lines };
}

function peerMaps(peer: BgpPeer, special: readonly AdvertisedPrefix[]): string[] {
  const name = mapName(peer);
  const lines: string[] = [`route-map ${name}-in deny 10`, "exit", "!"];
  const groups = new Map<string, { attrs: PathAttributes; prefixes: string[] }>();
  for (const p of special) {
    const attrs = p.peers.get(peer.key);
    if (!attrs || p.family !== peer.family) continue;
    const key = attributeKey(attrs);
    const group = groups.get(key) ?? { attrs, prefixes: [] };
    groups.set(key, group);
    group.prefixes.push(p.prefix);
  }
  const ordered = [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  ordered.forEach(([, group], index) => {
    const list = `${name}-${index + 1}`;
    const kind = ip(peer.family);
    group.prefixes.forEach((prefix, i) =>
      lines.push(`${kind} prefix-list ${list} seq ${(i + 1) * 5} permit ${prefix}`),
    );
    lines.push(
      `route-map ${name}-out permit ${(index + 1) * 10}`,
      ` match ${kind} address prefix-list ${list}`,
    );
    lines.push(...sets(group.attrs, true), "exit", "!");
  });
  // The exceptions this peer does not get (or got above, with its own attributes); then everything else.
  if (special.some((p) => p.family === peer.family)) {
    lines.push(
      `route-map ${name}-out deny 65000`,
      ` match ${ip(peer.family)} address prefix-list ${specialList(peer.family)}`,
      "exit",
      "!",
    );
  }
  lines.push(`route-map ${name}-out permit 65535`, "exit", "!");
  return lines;
}

function sets(attrs: PathAttributes, additive: boolean): string[] {
  const lines: string[] = [];
  const more = additive ? " additive" : "";
  if (attrs.localPref !== undefined) lines.push(` set local-preference ${attrs.localPref}`);
  if (attrs.communities.length > 0) lines.push(` set community ${attrs.communities.join(" ")}${more}`);
  if (attrs.largeCommunities.length > 0)
    lines.push(` set large-community ${attrs.largeCommunities.join(" ")}${more}`);
  return lines;
}

function isPlain(attrs: PathAttributes): boolean {
  return (
    attrs.localPref === undefined && attrs.communities.length === 0 && attrs.largeCommunities.length === 0
  );
}

function attributeKey(attrs: PathAttributes): string {
  return `${attrs.localPref ?? ""}|${attrs.communities.join(" ")}|${attrs.largeCommunities.join(" ")}`;
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 10);
}

function ip(family: IPFamily): "ip" | "ipv6" {
  return family === "IPv4" ? "ip" : "ipv6";
}

function specialList(family: IPFamily): string {
  return `portico-some-peers-${family === "IPv4" ? "v4" : "v6"}`;
}
