// Ethernet II framing, including 802.1Q / 802.1ad VLAN tags: decoded tags are kept so a reply can be
// sent on the same VLAN it was asked on.
import { decoded, malformed, readUint16, writeUint16, type Decoded } from "./decoded.ts";
import { formatMac, macBytes } from "./mac.ts";

export const ETHERTYPE_IPV4 = 0x0800;
export const ETHERTYPE_ARP = 0x0806;
export const ETHERTYPE_IPV6 = 0x86dd;
export const ETHERTYPE_VLAN = 0x8100;
export const ETHERTYPE_QINQ = 0x88a8;

const HEADER_LENGTH = 14;
const TAG_LENGTH = 4;
/** QinQ (outer 802.1ad + inner 802.1Q) is the most stacking seen in practice. */
const MAX_TAGS = 2;

export interface VlanTag {
  /** 0x8100 (802.1Q) or 0x88a8 (802.1ad). */
  readonly tpid: number;
  readonly priority: number;
  readonly dropEligible: boolean;
  readonly vlanId: number;
}

export interface EthernetFrame {
  readonly destination: string;
  readonly source: string;
  /** Outermost first. */
  readonly vlanTags: readonly VlanTag[];
  /** Values below 0x0600 are 802.3 lengths, not EtherTypes; nothing here handles those frames. */
  readonly etherType: number;
  /** A view into the decoded buffer, not a copy. May carry trailing padding. */
  readonly payload: Uint8Array;
}

export function decodeEthernet(frame: Uint8Array): Decoded<EthernetFrame> {
  if (frame.length < HEADER_LENGTH) {
    return malformed("Truncated", `Ethernet header needs ${HEADER_LENGTH} bytes, got ${frame.length}`);
  }
  const vlanTags: VlanTag[] = [];
  let offset = 12;
  let etherType = readUint16(frame, offset);
  while (etherType === ETHERTYPE_VLAN || etherType === ETHERTYPE_QINQ) {
    if (vlanTags.length === MAX_TAGS) return malformed("TooManyVlanTags", `more than ${MAX_TAGS} VLAN tags`);
    if (frame.length < offset + TAG_LENGTH + 2) {
      return malformed("Truncated", `VLAN tag at byte ${offset} runs past the end of the frame`);
    }
    const control = readUint16(frame, offset + 2);
    vlanTags.push({
      tpid: etherType,
      priority: control >>> 13,
      dropEligible: (control & 0x1000) !== 0,
      vlanId: control & 0x0fff,
    });
    offset += TAG_LENGTH;
    etherType = readUint16(frame, offset);
  }
  return decoded({
    destination: formatMac(frame, 0),
    source: formatMac(frame, 6),
    vlanTags,
    etherType,
    payload: frame.subarray(offset + 2),
  });
}

export interface EthernetFrameInput {
  readonly destination: string;
  readonly source: string;
  readonly vlanTags?: readonly VlanTag[];
  readonly etherType: number;
  readonly payload: Uint8Array;
}

/** Builds a frame without padding or FCS; the NIC pads to the 60-byte minimum and appends the FCS. */
export function encodeEthernet(input: EthernetFrameInput): Buffer {
  const tags = input.vlanTags ?? [];
  const headerLength = HEADER_LENGTH + TAG_LENGTH * tags.length;
  const frame = Buffer.alloc(headerLength + input.payload.length);
  frame.set(macBytes(input.destination), 0);
  frame.set(macBytes(input.source), 6);
  let offset = 12;
  for (const tag of tags) {
    writeUint16(frame, offset, tag.tpid);
    writeUint16(
      frame,
      offset + 2,
      ((tag.priority & 0x7) << 13) | (tag.dropEligible ? 0x1000 : 0) | (tag.vlanId & 0xfff),
    );
    offset += TAG_LENGTH;
  }
  writeUint16(frame, offset, input.etherType);
  frame.set(input.payload, headerLength);
  return frame;
}
