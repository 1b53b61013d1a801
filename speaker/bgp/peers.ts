// BGPPeers and BFDProfiles as the speaker reads them: Portico's (portico.io, cluster-scoped) and MetalLB's
// (metallb.io/v1beta2 BGPPeer and v1beta1 BFDProfile, namespaced, in MetalLB's namespace), with MetalLB's field
// names and meaning so a peer moved over from MetalLB peers the same way. Read leniently, object by object: a
// peer that cannot be used is left out and said why (the CRD's schema and CEL rules refuse most of these at
// admission; MetalLB's objects and older apiservers get no such check). A field Portico does not implement
// makes the peer unusable rather than silently different from what the user wrote.
import { isPlainObject } from "../../shared/labelSelector.ts";
import { readObjects, type ConfigObject } from "../configObjects.ts";

import { parseIP, type IPFamily } from "../../shared/address.ts";
import { nodeMayAnnounce, type NodeSelector } from "../nodeSelectors.ts";
import { readSelectors, type PoolGroup } from "../pools.ts";
import type { Labels } from "../../shared/labelSelector.ts";

export interface BgpPeer {
  /** As advertisements name it in `peers`: the object's name. */
  readonly name: string;
  /** Unique: the name (Portico's) or namespace/name (MetalLB's). */
  readonly key: string;
  readonly group: PoolGroup;
  readonly myASN: number;
  readonly peerASN: number;
  readonly address: string;
  readonly family: IPFamily;
  readonly port?: number;
  readonly localASN?: number;
  readonly sourceAddress?: string;
  readonly routerID?: string;
  /** Seconds. */
  readonly holdTime?: number;
  readonly keepaliveTime?: number;
  readonly connectTime?: number;
  readonly password?: string;
  /** A Secret in the speaker's namespace whose `password` key is the session's password. */
  readonly passwordSecret?: string;
  readonly bfdProfile?: string;
  readonly ebgpMultiHop: boolean;
  readonly gracefulRestart: boolean;
  readonly nodeSelectors: readonly NodeSelector[];
}

export interface BfdProfile {
  readonly name: string;
  readonly receiveInterval?: number;
  readonly transmitInterval?: number;
  readonly detectMultiplier?: number;
  readonly echoInterval?: number;
  readonly echoMode: boolean;
  readonly passiveMode: boolean;
  readonly minimumTtl?: number;
}

const PEER_FIELDS = new Set([
  "myASN",
  "peerASN",
  "peerAddress",
  "peerPort",
  "localASN",
  "sourceAddress",
  "routerID",
  "holdTime",
  "keepaliveTime",
  "connectTime",
  "password",
  "passwordSecret",
  "bfdProfile",
  "ebgpMultiHop",
  "enableGracefulRestart",
  "nodeSelectors",
]);

/** MetalLB fields Portico does not implement, and what to do instead. */
const UNSUPPORTED_PEER_FIELDS: Record<string, string> = {
  interface: "unnumbered BGP is not implemented; give peerAddress instead",
  dynamicASN: "a dynamic peer ASN is not implemented; give peerASN instead",
  vrf: "peering in a VRF is not implemented; peer in the default VRF",
  disableMP: "disableMP is not implemented; remove it (each address family has its own session settings)",
  dualStackAddressFamily: "dualStackAddressFamily is not implemented; add one BGPPeer per address family",
};

const MAX_ASN = 4294967295;

export function readPeers(
  objects: readonly ConfigObject[],
  group: PoolGroup,
): { peers: BgpPeer[]; problems: string[] } {
  const { items, problems } = readObjects(
    objects,
    group,
    "BGPPeer",
    ({ name, key, spec, found }): BgpPeer | undefined => {
      for (const field of Object.keys(spec)) {
        if (UNSUPPORTED_PEER_FIELDS[field]) found.push(`spec.${field}: ${UNSUPPORTED_PEER_FIELDS[field]}`);
        else if (!PEER_FIELDS.has(field)) found.push(`spec.${field} is not a BGPPeer field Portico knows`);
      }
      const asn = (field: string, required: boolean): number | undefined => {
        const value = spec[field];
        if (value === undefined) {
          if (required) found.push(`spec.${field} is required`);
          return undefined;
        }
        if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_ASN)
          return value;
        found.push(`spec.${field} must be an AS number from 1 to ${MAX_ASN}`);
        return undefined;
      };
      const myASN = asn("myASN", true);
      const peerASN = asn("peerASN", true);
      const localASN = asn("localASN", false);
      const address = ipField(spec.peerAddress, "spec.peerAddress", true, found);
      const sourceAddress = ipField(spec.sourceAddress, "spec.sourceAddress", false, found);
      const routerID = ipField(spec.routerID, "spec.routerID", false, found);
      if (routerID && routerID.family !== "IPv4") found.push("spec.routerID must be an IPv4 address");
      const port =
        spec.peerPort === undefined ? undefined : integer(spec.peerPort, "spec.peerPort", 1, 65535, found);
      const holdTime = durationField(spec.holdTime, "spec.holdTime", found);
      const keepaliveTime = durationField(spec.keepaliveTime, "spec.keepaliveTime", found);
      const connectTime = durationField(spec.connectTime, "spec.connectTime", found);
      if (holdTime !== undefined && holdTime !== 0 && holdTime < 3)
        found.push("spec.holdTime must be 0 or at least 3s (RFC 4271)");
      if (holdTime !== undefined && keepaliveTime !== undefined && keepaliveTime > holdTime)
        found.push("spec.keepaliveTime must not exceed spec.holdTime");
      const password = optionalString(spec.password, "spec.password", found);
      const secret = isPlainObject(spec.passwordSecret) ? spec.passwordSecret : undefined;
      const passwordSecret = secret
        ? optionalString(secret.name, "spec.passwordSecret.name", found)
        : undefined;
      if (password && passwordSecret)
        found.push("spec.password and spec.passwordSecret are exclusive: give one");
      const bfdProfile = optionalString(spec.bfdProfile, "spec.bfdProfile", found);
      const nodeSelectors = readSelectors(spec.nodeSelectors, "spec.nodeSelectors", (p) => found.push(p));
      if (myASN === undefined || peerASN === undefined || !address) return undefined;
      return {
        name,
        key,
        group,
        myASN,
        peerASN,
        address: address.text,
        family: address.family,
        ebgpMultiHop: spec.ebgpMultiHop === true,
        gracefulRestart: spec.enableGracefulRestart === true,
        nodeSelectors,
        ...(port !== undefined ? { port } : {}),
        ...(localASN !== undefined ? { localASN } : {}),
        ...(sourceAddress ? { sourceAddress: sourceAddress.text } : {}),
        ...(routerID ? { routerID: routerID.text } : {}),
        ...(holdTime !== undefined ? { holdTime } : {}),
        ...(keepaliveTime !== undefined ? { keepaliveTime } : {}),
        ...(connectTime !== undefined ? { connectTime } : {}),
        ...(password ? { password } : {}),
        ...(passwordSecret ? { passwordSecret } : {}),
        ...(bfdProfile ? { bfdProfile } : {}),
      };
    },
  );
  return { peers: items, problems };
}

const PROFILE_FIELDS: Record<string, [number, number]> = {
  receiveInterval: [10, 60000],
  transmitInterval: [10, 60000],
  detectMultiplier: [2, 255],
  echoInterval: [10, 60000],
  minimumTtl: [1, 254],
};

export function readBfdProfiles(
  objects: readonly ConfigObject[],
  group: PoolGroup,
): { profiles: BfdProfile[]; problems: string[] } {
  const { items, problems } = readObjects(
    objects,
    group,
    "BFDProfile",
    ({ name, spec, found }): BfdProfile => {
      const numbers: Record<string, number> = {};
      for (const [field, value] of Object.entries(spec)) {
        const range = PROFILE_FIELDS[field];
        if (range) {
          const n = integer(value, `spec.${field}`, range[0], range[1], found);
          if (n !== undefined) numbers[field] = n;
        } else if (field !== "echoMode" && field !== "passiveMode") {
          found.push(`spec.${field} is not a BFDProfile field Portico knows`);
        }
      }
      return { name, echoMode: spec.echoMode === true, passiveMode: spec.passiveMode === true, ...numbers };
    },
  );
  return { profiles: items, problems };
}

/** The peers this node opens sessions with: those whose nodeSelectors match it (none: every node). */
export function peersOfNode(peers: readonly BgpPeer[], nodeLabels: Labels): BgpPeer[] {
  return peers.filter((peer) => nodeMayAnnounce(peer.nodeSelectors, nodeLabels));
}

function ipField(raw: unknown, field: string, required: boolean, found: string[]) {
  if (raw === undefined || raw === "") {
    if (required) found.push(`${field} is required`);
    return undefined;
  }
  if (typeof raw !== "string") {
    found.push(`${field} must be an IP address`);
    return undefined;
  }
  const parsed = parseIP(raw.trim());
  if (parsed.ok) return parsed.value;
  found.push(`${field}: ${parsed.problem}`);
  return undefined;
}

function integer(raw: unknown, field: string, min: number, max: number, found: string[]): number | undefined {
  if (typeof raw === "number" && Number.isInteger(raw) && raw >= min && raw <= max) return raw;
  found.push(`${field} must be an integer from ${min} to ${max}`);
  return undefined;
}

function optionalString(raw: unknown, field: string, found: string[]): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw === "string") return raw;
  found.push(`${field} must be a string`);
  return undefined;
}

const DURATION_UNITS: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };

/** A Kubernetes Duration ("90s", "1m30s", "3s") in whole seconds, as FRR's timers take them. */
export function parseDuration(text: string): number | undefined {
  const parts = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s))+$/.test(text)
    ? text.match(/\d+(?:\.\d+)?(?:h|ms|m|s)/g)
    : null;
  if (!parts) return undefined;
  let seconds = 0;
  for (const part of parts) {
    const [, value, unit] = /^(\d+(?:\.\d+)?)(h|ms|m|s)$/.exec(part)!;
    seconds += Number(value) * DURATION_UNITS[unit!]!;
  }
  return Number.isInteger(seconds) ? seconds : undefined;
}

function durationField(raw: unknown, field: string, found: string[]): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = typeof raw === "string" ? parseDuration(raw) : undefined;
  if (seconds === undefined || seconds > 65535)
    found.push(`${field} must be a duration in whole seconds up to 65535s, such as "90s" or "1m30s"`);
  return seconds;
}
