// IPv6 Neighbor Discovery (RFC 4861): Neighbor Solicitations (type 135) in, Neighbor Advertisements
// (type 136) out. Decoding applies the validity checks of RFC 4861 §7.1, so a speaker never answers a
// solicitation a conforming host would drop (in particular one that did not arrive with hop limit 255,
// which proves it was not forwarded by a router).
import { formatIPBytes } from "../../shared/address.ts";
import { decoded, malformed, writeUint16, type Decoded } from "./decoded.ts";
import { encodeIPv6, ipv6Bytes, NEXT_HEADER_ICMPV6, pseudoHeaderChecksum, type IPv6Packet } from "./ipv6.ts";
import { formatMac, isMac, macBytes } from "./mac.ts";

export const ICMPV6_NEIGHBOR_SOLICITATION = 135;
export const ICMPV6_NEIGHBOR_ADVERTISEMENT = 136;
export const NDP_HOP_LIMIT = 255;
export const ALL_NODES = "ff02::1";

const OPTION_SOURCE_LINK_LAYER = 1;
const OPTION_TARGET_LINK_LAYER = 2;
/** Type, code, checksum, 4 bytes of flags/reserved, 16-byte target. */
const MESSAGE_LENGTH = 24;

export interface NeighborSolicitation {
  readonly kind: "NeighborSolicitation";
  readonly ipSource: string;
  readonly ipDestination: string;
  readonly target: string;
  readonly sourceLinkLayerAddress?: string;
  /** Duplicate Address Detection: sent from "::" by a host probing whether `target` is free. */
  readonly isDad: boolean;
}

export interface NeighborAdvertisement {
  readonly kind: "NeighborAdvertisement";
  readonly ipSource: string;
  readonly ipDestination: string;
  readonly router: boolean;
  readonly solicited: boolean;
  readonly override: boolean;
  readonly target: string;
  readonly targetLinkLayerAddress?: string;
}

export type NdpMessage = NeighborSolicitation | NeighborAdvertisement;

/** Decodes and validates an NS or NA carried in an already decoded IPv6 packet. */
export function decodeNdp(packet: IPv6Packet): Decoded<NdpMessage> {
  if (packet.nextHeader !== NEXT_HEADER_ICMPV6) {
    return malformed("UnsupportedNextHeader", `next header ${packet.nextHeader}, expected 58 (ICMPv6)`);
  }
  const message = packet.payload;
  if (message.length < 4) return malformed("Truncated", `ICMPv6 header needs 4 bytes, got ${message.length}`);
  const type = message[0] ?? 0;
  if (type !== ICMPV6_NEIGHBOR_SOLICITATION && type !== ICMPV6_NEIGHBOR_ADVERTISEMENT) {
    return malformed("UnsupportedIcmpType", `ICMPv6 type ${type} is not Neighbor Discovery`);
  }
  if (packet.hopLimit !== NDP_HOP_LIMIT) {
    return malformed("BadHopLimit", `hop limit ${packet.hopLimit}; RFC 4861 requires 255 (not forwarded)`);
  }
  if (pseudoHeaderChecksum(packet.sourceBytes, packet.destinationBytes, NEXT_HEADER_ICMPV6, message) !== 0) {
    return malformed("BadChecksum", "ICMPv6 checksum does not match");
  }
  if (message[1] !== 0) return malformed("BadIcmpCode", `ICMPv6 code ${message[1]}, expected 0`);
  if (message.length < MESSAGE_LENGTH) {
    return malformed(
      "Truncated",
      `Neighbor Discovery message needs ${MESSAGE_LENGTH} bytes, got ${message.length}`,
    );
  }
  const targetBytes = message.subarray(8, 24);
  if (targetBytes[0] === 0xff) return malformed("MulticastTarget", "target address is multicast");
  const options = decodeOptions(message.subarray(MESSAGE_LENGTH));
  if (!options.ok) return options;
  const target = formatIPBytes(targetBytes);
  const base = { ipSource: packet.source, ipDestination: packet.destination, target };

  if (type === ICMPV6_NEIGHBOR_SOLICITATION) {
    const isDad = packet.source === "::";
    const sourceLinkLayerAddress = options.value.get(OPTION_SOURCE_LINK_LAYER);
    if (isDad && !isSolicitedNodeMulticast(packet.destinationBytes)) {
      return malformed(
        "BadDadSolicitation",
        "solicitation from :: not sent to a solicited-node multicast address",
      );
    }
    if (isDad && sourceLinkLayerAddress !== undefined) {
      return malformed(
        "BadDadSolicitation",
        "solicitation from :: carries a source link-layer address option",
      );
    }
    return decoded({
      kind: "NeighborSolicitation",
      ...base,
      isDad,
      ...(sourceLinkLayerAddress === undefined ? {} : { sourceLinkLayerAddress }),
    });
  }

  const flags = message[4] ?? 0;
  const solicited = (flags & 0x40) !== 0;
  if (solicited && packet.destinationBytes[0] === 0xff) {
    return malformed(
      "SolicitedToMulticast",
      "advertisement to a multicast address has the Solicited flag set",
    );
  }
  const targetLinkLayerAddress = options.value.get(OPTION_TARGET_LINK_LAYER);
  return decoded({
    kind: "NeighborAdvertisement",
    ...base,
    router: (flags & 0x80) !== 0,
    solicited,
    override: (flags & 0x20) !== 0,
    ...(targetLinkLayerAddress === undefined ? {} : { targetLinkLayerAddress }),
  });
}

/** Link-layer address options by type (RFC 4861 §4.6.1); other options are skipped but still length-checked. */
function decodeOptions(bytes: Uint8Array): Decoded<Map<number, string>> {
  const linkLayer = new Map<number, string>();
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < 2)
      return malformed("TruncatedOption", `option header at byte ${offset} is cut off`);
    const type = bytes[offset] ?? 0;
    const length = (bytes[offset + 1] ?? 0) * 8;
    if (length === 0) return malformed("ZeroLengthOption", `option type ${type} has length 0`);
    if (offset + length > bytes.length) {
      return malformed(
        "TruncatedOption",
        `option type ${type} claims ${length} bytes, ${bytes.length - offset} remain`,
      );
    }
    if (type === OPTION_SOURCE_LINK_LAYER || type === OPTION_TARGET_LINK_LAYER) {
      // On Ethernet the option is exactly 8 bytes: type, length, 6-byte MAC (RFC 2464 §6).
      if (length !== 8)
        return malformed("BadLinkLayerOption", `link-layer address option of ${length} bytes, expected 8`);
      if (!linkLayer.has(type)) linkLayer.set(type, formatMac(bytes, offset + 2));
    }
    offset += length;
  }
  return decoded(linkLayer);
}

/** ff02::1:ffXX:XXXX (RFC 4291 §2.7.1). */
export function isSolicitedNodeMulticast(address: Uint8Array): boolean {
  const prefix = [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff];
  return address.length === 16 && prefix.every((byte, index) => address[index] === byte);
}

export function solicitedNodeMulticast(address: string): string {
  const bytes = ipv6Bytes(address);
  const multicast = Uint8Array.from([0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0, 0]);
  multicast.set(bytes.subarray(13, 16), 13);
  return formatIPBytes(multicast);
}

function linkLayerOption(type: number, mac: string): Uint8Array {
  const option = new Uint8Array(8);
  option[0] = type;
  option[1] = 1;
  option.set(macBytes(mac), 2);
  return option;
}

/** Wraps an ICMPv6 message in an IPv6 packet with hop limit 255 and fills in the checksum. */
function encodeNdpPacket(source: string, destination: string, message: Uint8Array): Buffer {
  const checksum = pseudoHeaderChecksum(
    ipv6Bytes(source),
    ipv6Bytes(destination),
    NEXT_HEADER_ICMPV6,
    message,
  );
  writeUint16(message, 2, checksum);
  return encodeIPv6({
    source,
    destination,
    nextHeader: NEXT_HEADER_ICMPV6,
    hopLimit: NDP_HOP_LIMIT,
    payload: message,
  });
}

export interface NeighborSolicitationInput {
  /** "::" for Duplicate Address Detection. */
  readonly source: string;
  /** Defaults to the target's solicited-node multicast address. */
  readonly destination?: string;
  readonly target: string;
  readonly sourceLinkLayerAddress?: string;
}

/** An IPv6 packet carrying a Neighbor Solicitation. */
export function encodeNeighborSolicitation(input: NeighborSolicitationInput): Buffer {
  const option = input.sourceLinkLayerAddress
    ? linkLayerOption(OPTION_SOURCE_LINK_LAYER, input.sourceLinkLayerAddress)
    : undefined;
  const message = new Uint8Array(MESSAGE_LENGTH + (option?.length ?? 0));
  message[0] = ICMPV6_NEIGHBOR_SOLICITATION;
  message.set(ipv6Bytes(input.target), 8);
  if (option) message.set(option, MESSAGE_LENGTH);
  return encodeNdpPacket(input.source, input.destination ?? solicitedNodeMulticast(input.target), message);
}

export interface NeighborAdvertisementInput {
  readonly source: string;
  readonly destination: string;
  readonly target: string;
  readonly router?: boolean;
  readonly solicited: boolean;
  readonly override: boolean;
  readonly targetLinkLayerAddress?: string;
}

/** An IPv6 packet carrying a Neighbor Advertisement. */
export function encodeNeighborAdvertisement(input: NeighborAdvertisementInput): Buffer {
  const mac = input.targetLinkLayerAddress;
  if (mac !== undefined && !isMac(mac)) throw new TypeError(`"${mac}" is not a MAC address`);
  const option = mac ? linkLayerOption(OPTION_TARGET_LINK_LAYER, mac) : undefined;
  const message = new Uint8Array(MESSAGE_LENGTH + (option?.length ?? 0));
  message[0] = ICMPV6_NEIGHBOR_ADVERTISEMENT;
  message[4] = (input.router ? 0x80 : 0) | (input.solicited ? 0x40 : 0) | (input.override ? 0x20 : 0);
  message.set(ipv6Bytes(input.target), 8);
  if (option) message.set(option, MESSAGE_LENGTH);
  return encodeNdpPacket(input.source, input.destination, message);
}
