// The fixed IPv6 header (RFC 8200 §3) and the upper-layer checksum over the IPv6 pseudo-header
// (RFC 8200 §8.1) that ICMPv6 uses. Extension headers are not parsed: Neighbor Discovery never needs them.
import { formatIPBytes, ipBytes, parseIP } from "../../shared/address.ts";
import { decoded, malformed, readUint16, writeUint16, type Decoded } from "./decoded.ts";

export const IPV6_HEADER_LENGTH = 40;
export const NEXT_HEADER_ICMPV6 = 58;

export interface IPv6Packet {
  readonly trafficClass: number;
  readonly flowLabel: number;
  readonly nextHeader: number;
  readonly hopLimit: number;
  readonly source: string;
  readonly destination: string;
  /** Raw 16-byte addresses, needed for the pseudo-header checksum. */
  readonly sourceBytes: Uint8Array;
  readonly destinationBytes: Uint8Array;
  /** Exactly payloadLength bytes; Ethernet padding after it is dropped. */
  readonly payload: Uint8Array;
}

export function decodeIPv6(bytes: Uint8Array): Decoded<IPv6Packet> {
  if (bytes.length < IPV6_HEADER_LENGTH) {
    return malformed("Truncated", `IPv6 header needs ${IPV6_HEADER_LENGTH} bytes, got ${bytes.length}`);
  }
  const version = (bytes[0] ?? 0) >>> 4;
  if (version !== 6) return malformed("NotIPv6", `IP version ${version}`);
  const payloadLength = readUint16(bytes, 4);
  if (IPV6_HEADER_LENGTH + payloadLength > bytes.length) {
    return malformed(
      "BadPayloadLength",
      `payload length ${payloadLength} exceeds the ${bytes.length - IPV6_HEADER_LENGTH} bytes present`,
    );
  }
  const sourceBytes = bytes.subarray(8, 24);
  const destinationBytes = bytes.subarray(24, 40);
  return decoded({
    trafficClass: (readUint16(bytes, 0) >>> 4) & 0xff,
    flowLabel: (((bytes[1] ?? 0) & 0x0f) << 16) | readUint16(bytes, 2),
    nextHeader: bytes[6] ?? 0,
    hopLimit: bytes[7] ?? 0,
    source: formatIPBytes(sourceBytes),
    destination: formatIPBytes(destinationBytes),
    sourceBytes,
    destinationBytes,
    payload: bytes.subarray(IPV6_HEADER_LENGTH, IPV6_HEADER_LENGTH + payloadLength),
  });
}

export interface IPv6PacketInput {
  readonly source: string;
  readonly destination: string;
  readonly nextHeader: number;
  readonly hopLimit: number;
  readonly payload: Uint8Array;
  readonly trafficClass?: number;
  readonly flowLabel?: number;
}

export function encodeIPv6(input: IPv6PacketInput): Buffer {
  const packet = Buffer.alloc(IPV6_HEADER_LENGTH + input.payload.length);
  const trafficClass = input.trafficClass ?? 0;
  const flowLabel = input.flowLabel ?? 0;
  packet.writeUInt32BE(((6 << 28) | ((trafficClass & 0xff) << 20) | (flowLabel & 0xfffff)) >>> 0, 0);
  writeUint16(packet, 4, input.payload.length);
  packet[6] = input.nextHeader;
  packet[7] = input.hopLimit;
  packet.set(ipv6Bytes(input.source), 8);
  packet.set(ipv6Bytes(input.destination), 24);
  packet.set(input.payload, IPV6_HEADER_LENGTH);
  return packet;
}

/** Bytes of an IPv6 address given by the caller; anything else is a programming error. */
export function ipv6Bytes(text: string): Uint8Array {
  const parsed = parseIP(text);
  if (!parsed.ok || parsed.value.family !== "IPv6") throw new TypeError(`"${text}" is not an IPv6 address`);
  return ipBytes(parsed.value);
}

/**
 * The Internet checksum (RFC 1071) of an upper-layer message over the IPv6 pseudo-header: source,
 * destination, 32-bit length, three zero bytes and the next-header value. Computed over the message
 * as given, so a received message with its checksum in place sums to 0 when intact.
 */
export function pseudoHeaderChecksum(
  source: Uint8Array,
  destination: Uint8Array,
  nextHeader: number,
  message: Uint8Array,
): number {
  let sum = 0;
  const add = (bytes: Uint8Array): void => {
    for (let i = 0; i < bytes.length; i += 2) sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
  };
  add(source);
  add(destination);
  const length = message.length;
  sum += (length >>> 16) & 0xffff;
  sum += length & 0xffff;
  sum += nextHeader;
  add(message);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}
