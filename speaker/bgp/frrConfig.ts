// FRR's configuration for one node, rendered from the peers it has and the prefixes it advertises. Pure and
// deterministic: the same input gives the same text, so FRR's own reload (frr-reload.py, which diffs the file
// against the running configuration) changes only what changed — a new Service adds one `network` line, and
// no session is reset. Who gets which prefix with which attributes is frrFilters.ts's.
import type { BfdProfile, BgpPeer } from "./peers.ts";
import { mapName, planFilters } from "./frrFilters.ts";
import type { AdvertisedPrefix } from "./routes.ts";

export interface FrrInput {
  readonly hostname: string;
  /** Each peer with the password its Secret holds, when it names one. */
  readonly peers: readonly (BgpPeer & { readonly resolvedPassword?: string })[];
  readonly prefixes: readonly AdvertisedPrefix[];
  readonly bfdProfiles: readonly BfdProfile[];
  /** Counts the configurations written, so whoever applies one can say which it applied. */
  readonly generation: number;
}

export interface FrrRender {
  readonly text: string;
  /** Peers left out, and why (a second local AS number; a BFD profile that does not exist). */
  readonly problems: string[];
  /** The peers configured (keys). */
  readonly peers: string[];
}

export const GENERATION_MARK = "! portico generation ";

export function renderFrrConfig(input: FrrInput): FrrRender {
  const problems: string[] = [];
  const sorted = [...input.peers].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const asn = sorted[0]?.myASN;
  const profiles = new Map(input.bfdProfiles.map((p) => [p.name, p] as const));
  const peers = sorted.filter((peer) => {
    if (peer.myASN !== asn) {
      problems.push(
        `BGPPeer ${peer.key}: myASN ${peer.myASN} differs from ${asn} of BGPPeer ${sorted[0]!.key}; a node speaks BGP as one AS, so this peer is left out (give every BGPPeer of a node the same myASN, or use localASN)`,
      );
      return false;
    }
    return true;
  });
  const seen = new Set<string>();
  const unique = peers.filter((peer) => {
    const id = neighbor(peer);
    if (seen.has(id)) {
      problems.push(`BGPPeer ${peer.key}: another BGPPeer of this node already peers with ${id}; left out`);
      return false;
    }
    seen.add(id);
    return true;
  });
  const lines: string[] = [
    `${GENERATION_MARK}${input.generation}`,
    "! Written by the Portico speaker; applied with frr-reload.py. Do not edit: the next change overwrites it.",
    "frr defaults traditional",
    `hostname ${input.hostname}`,
    "log stdout informational",
    "ip nht resolve-via-default",
    "ipv6 nht resolve-via-default",
    "!",
  ];
  const filters = planFilters(unique, input.prefixes);
  lines.push(...filters.lines);
  if (unique.length > 0) {
    lines.push(`router bgp ${asn}`);
    const routerID = unique.find((p) => p.routerID)?.routerID;
    if (routerID) lines.push(` bgp router-id ${routerID}`);
    lines.push(
      " no bgp ebgp-requires-policy",
      " no bgp network import-check",
      " no bgp default ipv4-unicast",
    );
    // The node forwards to Services through kube-proxy, not through routes FRR installs, so its forwarding
    // survives FRR's restart: said in the graceful-restart capability (the F bit), a helper keeps the node's routes
    // while the speaker's pod is replaced, where without it the routes would go as the new session comes up.
    if (unique.some((p) => p.gracefulRestart)) lines.push(" bgp graceful-restart preserve-fw-state");
    for (const peer of unique) {
      const bfd = peer.bfdProfile;
      if (bfd !== undefined && !profiles.has(bfd)) {
        problems.push(
          `BGPPeer ${peer.key}: bfdProfile ${bfd} does not exist; the session runs without BFD until it does`,
        );
      }
      lines.push(...session(peer, bfd !== undefined && profiles.has(bfd)));
    }
    for (const family of ["IPv4", "IPv6"] as const) {
      lines.push(` address-family ${family === "IPv4" ? "ipv4" : "ipv6"} unicast`);
      for (const p of input.prefixes) {
        if (p.family !== family) continue;
        const map = filters.origin.get(p.prefix);
        lines.push(`  network ${p.prefix}${map ? ` route-map ${map}` : ""}`);
      }
      for (const peer of unique.filter((p) => p.family === family)) {
        const id = neighbor(peer);
        lines.push(
          `  neighbor ${id} activate`,
          `  neighbor ${id} route-map ${mapName(peer)}-in in`,
          `  neighbor ${id} route-map ${mapName(peer)}-out out`,
        );
      }
      lines.push(" exit-address-family");
    }
    lines.push("exit", "!");
  }
  const used = [
    ...new Set(unique.flatMap((p) => (p.bfdProfile && profiles.has(p.bfdProfile) ? [p.bfdProfile] : []))),
  ];
  if (used.length > 0) {
    lines.push("bfd");
    for (const name of used.sort()) lines.push(...bfdProfile(profiles.get(name)!));
    lines.push("exit", "!");
  }
  return { text: `${lines.join("\n")}\n`, problems, peers: unique.map((p) => p.key) };
}

function neighbor(peer: BgpPeer): string {
  return peer.address;
}

function session(peer: BgpPeer & { readonly resolvedPassword?: string }, bfd: boolean): string[] {
  const id = neighbor(peer);
  const lines = [` neighbor ${id} remote-as ${peer.peerASN}`];
  if (peer.port !== undefined) lines.push(` neighbor ${id} port ${peer.port}`);
  if (peer.localASN !== undefined)
    lines.push(` neighbor ${id} local-as ${peer.localASN} no-prepend replace-as`);
  const timers = sessionTimers(peer);
  if (timers) lines.push(` neighbor ${id} timers ${timers.keepalive} ${timers.hold}`);
  if (peer.connectTime !== undefined) lines.push(` neighbor ${id} timers connect ${peer.connectTime}`);
  const password = peer.password ?? peer.resolvedPassword;
  if (password) lines.push(` neighbor ${id} password ${password}`);
  if (peer.sourceAddress) lines.push(` neighbor ${id} update-source ${peer.sourceAddress}`);
  if (peer.ebgpMultiHop) lines.push(` neighbor ${id} ebgp-multihop`);
  if (peer.gracefulRestart) lines.push(` neighbor ${id} graceful-restart`);
  if (bfd) lines.push(` neighbor ${id} bfd`, ` neighbor ${id} bfd profile ${peer.bfdProfile}`);
  return lines;
}

/** Keepalive defaults to a third of the hold time, and the hold time to three keepalives, as in BGP itself. */
export function sessionTimers(peer: Pick<BgpPeer, "holdTime" | "keepaliveTime">) {
  const { holdTime, keepaliveTime } = peer;
  if (holdTime === undefined && keepaliveTime === undefined) return undefined;
  const hold = holdTime ?? keepaliveTime! * 3;
  const keepalive = keepaliveTime ?? Math.floor(hold / 3);
  return { keepalive, hold };
}

function bfdProfile(profile: BfdProfile): string[] {
  const lines = [` profile ${profile.name}`];
  if (profile.receiveInterval !== undefined) lines.push(`  receive-interval ${profile.receiveInterval}`);
  if (profile.transmitInterval !== undefined) lines.push(`  transmit-interval ${profile.transmitInterval}`);
  if (profile.detectMultiplier !== undefined) lines.push(`  detect-multiplier ${profile.detectMultiplier}`);
  if (profile.echoMode) lines.push("  echo-mode");
  if (profile.echoInterval !== undefined)
    lines.push(
      `  echo receive-interval ${profile.echoInterval}`,
      `  echo transmit-interval ${profile.echoInterval}`,
    );
  if (profile.passiveMode) lines.push("  passive-mode");
  if (profile.minimumTtl !== undefined) lines.push(`  minimum-ttl ${profile.minimumTtl}`);
  lines.push(" exit");
  return lines;
}
