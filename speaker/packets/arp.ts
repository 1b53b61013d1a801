// ARP for IPv4 over Ethernet (RFC 826), and the gratuitous ARP announcement of RFC 5227 §3 that a
// speaker broadcasts when it takes an address over, so neighbours update their caches at once.
import { parseIP, formatIPBytes, ipBytes } from "../../shared/address.ts";
import { decoded, malformed, readUint16, writeUint16, type Decoded } from "./decoded.ts";
import { encodeEthernet, ETHERTYPE_ARP, ETHERTYPE_IPV4, type VlanTag } from "./ethernet.ts";
import { BROADCAST_MAC, formatMac, macBytes, ZERO_MAC } from "./mac.ts";

export const ARP_LENGTH = 28;
const HTYPE_ETHERNET = 1;
const OP_REQUEST = 1;
const OP_REPLY = 2;

export type ArpOperation = "request" | "reply";

export interface ArpPacket {
  readonly operation: ArpOperation;
  readonly senderMac: string;
  readonly senderIp: string;
  readonly targetMac: string;
  readonly targetIp: string;
}

/** Decodes an ARP payload (after the Ethernet header). Trailing bytes (frame padding) are ignored. */
export function decodeArp(payload: Uint8Array): Decoded<ArpPacket> {
  if (payload.length < 8) return malformed("Truncated", `ARP header needs 8 bytes, got ${payload.length}`);
  const htype = readUint16(payload, 0);
  const ptype = readUint16(payload, 2);
  const hlen = payload[4] ?? 0;
  const plen = payload[5] ?? 0;
  const op = readUint16(payload, 6);
  if (htype !== HTYPE_ETHERNET)
    return malformed("UnsupportedHardwareType", `hardware type ${htype}, expected 1 (Ethernet)`);
  if (ptype !== ETHERTYPE_IPV4) {
    return malformed(
      "UnsupportedProtocolType",
      `protocol type 0x${ptype.toString(16)}, expected 0x0800 (IPv4)`,
    );
  }
  if (hlen !== 6) return malformed("BadHardwareLength", `hardware address length ${hlen}, expected 6`);
  if (plen !== 4) return malformed("BadProtocolLength", `protocol address length ${plen}, expected 4`);
  if (op !== OP_REQUEST && op !== OP_REPLY) return malformed("UnknownArpOperation", `operation ${op}`);
  if (payload.length < ARP_LENGTH) {
    return malformed("Truncated", `ARP packet needs ${ARP_LENGTH} bytes, got ${payload.length}`);
  }
  return decoded({
    operation: op === OP_REQUEST ? "request" : "reply",
    senderMac: formatMac(payload, 8),
    senderIp: formatIPBytes(payload.subarray(14, 18)),
    targetMac: formatMac(payload, 18),
    targetIp: formatIPBytes(payload.subarray(24, 28)),
  });
}

export function encodeArp(packet: ArpPacket): Buffer {
  const bytes = Buffer.alloc(ARP_LENGTH);
  writeUint16(bytes, 0, HTYPE_ETHERNET);
  writeUint16(bytes, 2, ETHERTYPE_IPV4);
  bytes[4] = 6;
  bytes[5] = 4;
  writeUint16(bytes, 6, packet.operation === "request" ? OP_REQUEST : OP_REPLY);
  bytes.set(macBytes(packet.senderMac), 8);
  bytes.set(ipv4Bytes(packet.senderIp), 14);
  bytes.set(macBytes(packet.targetMac), 18);
  bytes.set(ipv4Bytes(packet.targetIp), 24);
  return bytes;
}

function ipv4Bytes(text: string): Uint8Array {
  const parsed = parseIP(text);
  if (!parsed.ok || parsed.value.family !== "IPv4") throw new TypeError(`"${text}" is not an IPv4 address`);
  return ipBytes(parsed.value);
}

export interface ArpFrameOptions {
  readonly vlanTags?: readonly VlanTag[];
}

/** "Who has targetIp? Tell senderIp", broadcast. */
export function arpRequestFrame(
  request: { senderMac: string; senderIp: string; targetIp: string },
  options: ArpFrameOptions = {},
): Buffer {
  return encodeEthernet({
    destination: BROADCAST_MAC,
    source: request.senderMac,
    vlanTags: options.vlanTags ?? [],
    etherType: ETHERTYPE_ARP,
    payload: encodeArp({ operation: "request", targetMac: ZERO_MAC, ...request }),
  });
}

/** "senderIp is at senderMac", unicast to the asker. */
export function arpReplyFrame(
  reply: { senderMac: string; senderIp: string; targetMac: string; targetIp: string },
  options: ArpFrameOptions = {},
): Buffer {
  return encodeEthernet({
    destination: reply.targetMac,
    source: reply.senderMac,
    vlanTags: options.vlanTags ?? [],
    etherType: ETHERTYPE_ARP,
    payload: encodeArp({ operation: "reply", ...reply }),
  });
}

/**
 * Gratuitous ARP, broadcast, with sender and target IP both the announced address. "request" is the
 * RFC 5227 ARP Announcement (target MAC zero); "reply" is the variant some old stacks only honour
 * (as `arping -A` sends it, target MAC = sender MAC). Speakers send both on takeover.
 */
export function gratuitousArpFrame(
  address: string,
  mac: string,
  operation: ArpOperation = "request",
  options: ArpFrameOptions = {},
): Buffer {
  return encodeEthernet({
    destination: BROADCAST_MAC,
    source: mac,
    vlanTags: options.vlanTags ?? [],
    etherType: ETHERTYPE_ARP,
    payload: encodeArp({
      operation,
      senderMac: mac,
      senderIp: address,
      targetMac: operation === "request" ? ZERO_MAC : mac,
      targetIp: address,
    }),
  });
}
