// The speaker's hot path as one pure function: given a received frame, the addresses this node currently
// announces and the interface's MAC, decide the reply frame, if any. The socket code only reads frames,
// calls this and writes what it returns, so every decision here is unit-tested.
import { arpReplyFrame, decodeArp } from "./arp.ts";
import { ndpFrame } from "./announce.ts";
import type { MalformedReason } from "./decoded.ts";
import { decodeEthernet, ETHERTYPE_ARP, ETHERTYPE_IPV6, type EthernetFrame } from "./ethernet.ts";
import { decodeIPv6 } from "./ipv6.ts";
import { normalizeMac } from "./mac.ts";
import { ALL_NODES, decodeNdp, encodeNeighborAdvertisement } from "./ndp.ts";

/** Addresses in canonical text form (as produced by the election / shared/address.ts). */
export interface OwnedAddresses {
  has(address: string): boolean;
}

export type IgnoreReason =
  /** Neither ARP nor IPv6. */
  | "NotArpOrNdp"
  /** IPv6 but not a Neighbor Discovery message (ordinary traffic). */
  | "NotNeighborDiscovery"
  /** Our own transmission, looped back. */
  | "OwnFrame"
  /** ARP reply or Neighbor Advertisement: nothing to answer. */
  | "NotASolicitation"
  /** A gratuitous ARP announcing an address; answering would fight the announcer. */
  | "Announcement"
  | "NotOwned";

export type Response =
  | {
      readonly action: "reply";
      readonly protocol: "arp" | "ndp";
      readonly address: string;
      readonly frame: Buffer;
    }
  | { readonly action: "ignore"; readonly reason: IgnoreReason }
  | { readonly action: "drop"; readonly reason: MalformedReason; readonly detail: string };

const ignore = (reason: IgnoreReason): Response => ({ action: "ignore", reason });

export function respond(frame: Uint8Array, owned: OwnedAddresses, interfaceMac: string): Response {
  const mac = normalizeMac(interfaceMac);
  const ethernet = decodeEthernet(frame);
  if (!ethernet.ok) return { action: "drop", reason: ethernet.reason, detail: ethernet.detail };
  if (ethernet.value.source === mac) return ignore("OwnFrame");
  switch (ethernet.value.etherType) {
    case ETHERTYPE_ARP:
      return respondToArp(ethernet.value, owned, mac);
    case ETHERTYPE_IPV6:
      return respondToNdp(ethernet.value, owned, mac);
    default:
      return ignore("NotArpOrNdp");
  }
}

function respondToArp(ethernet: EthernetFrame, owned: OwnedAddresses, mac: string): Response {
  const arp = decodeArp(ethernet.payload);
  if (!arp.ok) return { action: "drop", reason: arp.reason, detail: arp.detail };
  const request = arp.value;
  if (request.operation !== "request") return ignore("NotASolicitation");
  if (request.senderIp === request.targetIp) return ignore("Announcement");
  if (!owned.has(request.targetIp)) return ignore("NotOwned");
  // An ARP probe (sender IP 0.0.0.0, RFC 5227) is answered too: the reply tells the prober the
  // address is taken, exactly as the kernel does for its own addresses.
  const reply = arpReplyFrame(
    { senderMac: mac, senderIp: request.targetIp, targetMac: request.senderMac, targetIp: request.senderIp },
    { vlanTags: ethernet.vlanTags },
  );
  return { action: "reply", protocol: "arp", address: request.targetIp, frame: reply };
}

function respondToNdp(ethernet: EthernetFrame, owned: OwnedAddresses, mac: string): Response {
  const packet = decodeIPv6(ethernet.payload);
  if (!packet.ok) return { action: "drop", reason: packet.reason, detail: packet.detail };
  const message = decodeNdp(packet.value);
  if (!message.ok) {
    // Ordinary IPv6 traffic is not malformed, just not ours to answer.
    if (message.reason === "UnsupportedIcmpType" || message.reason === "UnsupportedNextHeader") {
      return ignore("NotNeighborDiscovery");
    }
    return { action: "drop", reason: message.reason, detail: message.detail };
  }
  const solicitation = message.value;
  if (solicitation.kind !== "NeighborSolicitation") return ignore("NotASolicitation");
  if (!owned.has(solicitation.target)) return ignore("NotOwned");

  // RFC 4861 §7.2.4: answer DAD (source ::) with a multicast advertisement to all nodes, Solicited
  // clear; answer everything else unicast to the asker with Solicited set. Override is set in both,
  // as the address is ours alone.
  const destination = solicitation.isDad ? ALL_NODES : solicitation.ipSource;
  const advertisement = encodeNeighborAdvertisement({
    source: solicitation.target,
    destination,
    target: solicitation.target,
    solicited: !solicitation.isDad,
    override: true,
    targetLinkLayerAddress: mac,
  });
  const destinationMac = solicitation.isDad
    ? undefined
    : (solicitation.sourceLinkLayerAddress ?? ethernet.source);
  return {
    action: "reply",
    protocol: "ndp",
    address: solicitation.target,
    frame: ndpFrame(advertisement, destination, destinationMac, mac, ethernet.vlanTags),
  };
}
