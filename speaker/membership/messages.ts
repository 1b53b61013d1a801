// The speakers' membership messages on the wire: one JSON object per UDP datagram, optionally preceded by
// a 16-byte HMAC-SHA256 tag when the speakers share a secret. Datagrams come from the network, so decoding
// never throws: anything malformed, oversized or unauthenticated is undefined and counted by the caller.
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * `restarting`: the node's speaker stops to be replaced in place (its DaemonSet rolls) and keeps its addresses
 * meanwhile (memberlist.ts).
 */
export type MemberStatus = "alive" | "dead" | "restarting" | "left";

/** What one speaker believes about one node; incarnations order the beliefs about the same node. */
export interface Fact {
  readonly node: string;
  readonly incarnation: number;
  readonly status: MemberStatus;
}

export type Message =
  /** Liveness probe; `digest` summarises the sender's live set so that differing views are noticed. */
  | { readonly type: "ping"; readonly from: string; readonly incarnation: number; readonly digest: string }
  | { readonly type: "ack"; readonly from: string; readonly incarnation: number; readonly digest: string }
  /** A starting speaker, asking every node to answer with an `ack`. */
  | { readonly type: "join"; readonly from: string; readonly incarnation: number }
  /** News (a death, a departure, a refutation) or a part of a full view; `ask` requests the view back. */
  | {
      readonly type: "facts";
      readonly from: string;
      readonly facts: readonly Fact[];
      readonly digest?: string;
      readonly ask?: boolean;
    }
  /**
   * Make-before-break hand-over of addresses. `handover`: the node answering them now, no longer elected,
   * asks their new announcer to say when it answers them, naming the MACs it answers with (its answers to
   * the new announcer's conflict probes are no conflict); `answering`: the new announcer says it does.
   */
  | {
      readonly type: "handover" | "answering";
      readonly from: string;
      readonly addresses: readonly string[];
      readonly macs?: readonly string[];
    };

/** Well below the 1500-byte Ethernet MTU less IP/UDP headers, so a datagram is never fragmented. */
export const MAX_DATAGRAM = 1400;
const TAG_LENGTH = 16;
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const STATUSES: readonly string[] = ["alive", "dead", "restarting", "left"];

function tag(secret: Buffer, body: Buffer): Buffer {
  return createHmac("sha256", secret).update(body).digest().subarray(0, TAG_LENGTH);
}

export function encodeMessage(message: Message, secret?: Buffer): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  return secret ? Buffer.concat([tag(secret, body), body]) : body;
}

export function decodeMessage(datagram: Buffer, secret?: Buffer): Message | undefined {
  if (datagram.length > MAX_DATAGRAM) return undefined;
  let body = datagram;
  if (secret) {
    if (datagram.length <= TAG_LENGTH) return undefined;
    body = datagram.subarray(TAG_LENGTH);
    if (!timingSafeEqual(datagram.subarray(0, TAG_LENGTH), tag(secret, body))) return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  return validMessage(value);
}

const isNodeName = (value: unknown): value is string => typeof value === "string" && NODE_NAME.test(value);
const isIncarnation = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isDigest = (value: unknown): value is string => typeof value === "string" && value.length <= 64;
/** Loose on purpose: an address no speaker holds is simply never matched. IPv6 text is at most 45 characters. */
const isMac = (value: unknown): value is string =>
  typeof value === "string" && /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(value);
const isAddress = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= 45;

function validFact(value: unknown): Fact | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { node, incarnation, status } = value as Record<string, unknown>;
  if (!isNodeName(node) || !isIncarnation(incarnation) || typeof status !== "string") return undefined;
  if (!STATUSES.includes(status)) return undefined;
  return { node, incarnation, status: status as MemberStatus };
}

function validMessage(value: unknown): Message | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const m = value as Record<string, unknown>;
  if (!isNodeName(m.from)) return undefined;
  switch (m.type) {
    case "ping":
    case "ack":
      if (!isIncarnation(m.incarnation) || !isDigest(m.digest)) return undefined;
      return { type: m.type, from: m.from, incarnation: m.incarnation, digest: m.digest };
    case "join":
      if (!isIncarnation(m.incarnation)) return undefined;
      return { type: "join", from: m.from, incarnation: m.incarnation };
    case "facts": {
      if (!Array.isArray(m.facts)) return undefined;
      const facts = m.facts.map(validFact);
      if (facts.some((f) => f === undefined)) return undefined;
      if (m.digest !== undefined && !isDigest(m.digest)) return undefined;
      return {
        type: "facts",
        from: m.from,
        facts: facts as Fact[],
        ...(m.digest === undefined ? {} : { digest: m.digest }),
        ...(m.ask === true ? { ask: true } : {}),
      };
    }
    case "handover":
    case "answering":
      if (!Array.isArray(m.addresses) || !m.addresses.every(isAddress)) return undefined;
      if (m.macs !== undefined && !(Array.isArray(m.macs) && m.macs.every(isMac))) return undefined;
      return {
        type: m.type,
        from: m.from,
        addresses: m.addresses,
        ...(m.macs === undefined ? {} : { macs: m.macs }),
      };
    default:
      return undefined;
  }
}

/** Splits facts into `facts` messages that each fit in one datagram. */
export function factMessages(
  from: string,
  facts: readonly Fact[],
  extra: { digest?: string; ask?: boolean } = {},
  secret?: Buffer,
): Buffer[] {
  return chunk(facts, (list) => encodeMessage({ type: "facts", from, facts: list, ...extra }, secret));
}

/** Splits a hand-over message's addresses into messages that each fit in one datagram. */
export function addressMessages(
  type: "handover" | "answering",
  from: string,
  addresses: readonly string[],
  secret?: Buffer,
  macs?: readonly string[],
): Buffer[] {
  const extra = macs === undefined ? {} : { macs };
  return chunk(addresses, (list) => encodeMessage({ type, from, addresses: list, ...extra }, secret));
}

function chunk<T>(items: readonly T[], encode: (list: T[]) => Buffer): Buffer[] {
  const datagrams: Buffer[] = [];
  let batch: T[] = [];
  for (const item of items) {
    const candidate = [...batch, item];
    if (batch.length > 0 && encode(candidate).length > MAX_DATAGRAM) {
      datagrams.push(encode(batch));
      batch = [item];
    } else {
      batch = candidate;
    }
  }
  if (batch.length > 0 || datagrams.length === 0) datagrams.push(encode(batch));
  return datagrams;
}
