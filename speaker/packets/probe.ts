// Address conflict detection the way hosts do it. IPv4 (RFC 5227 §2.1): an ARP Probe asks who has an address
// with sender IP 0.0.0.0, so no neighbour's cache learns anything from it, and any ARP from that address (a
// reply, or the owner's own traffic) by a MAC that is not ours means another host uses it. IPv6 (RFC 4862
// §5.4): a Neighbor Solicitation from :: to the address's solicited-node group, and a Neighbor Advertisement
// for it (sent to all nodes) means another host uses it.
import { ndpFrame } from "./announce.ts";
import { decodeArp, encodeArp } from "./arp.ts";
import { encodeEthernet, decodeEthernet, ETHERTYPE_ARP, ETHERTYPE_IPV6, type VlanTag } from "./ethernet.ts";
import { decodeIPv6 } from "./ipv6.ts";
import { BROADCAST_MAC, ZERO_MAC } from "./mac.ts";
import { decodeNdp, encodeNeighborSolicitation, solicitedNodeMulticast } from "./ndp.ts";

/** "Who has `address`?" from 0.0.0.0, broadcast. */
export function arpProbeFrame(address: string, mac: string, vlanTags: readonly VlanTag[] = []): Buffer {
  return encodeEthernet({
    destination: BROADCAST_MAC,
    source: mac,
    vlanTags,
    etherType: ETHERTYPE_ARP,
    payload: encodeArp({
      operation: "request",
      senderMac: mac,
      senderIp: "0.0.0.0",
      targetMac: ZERO_MAC,
      targetIp: address,
    }),
  });
}

/** Duplicate address detection: "who has `address`?" from ::, to its solicited-node group. */
export function dadProbeFrame(address: string, mac: string, vlanTags: readonly VlanTag[] = []): Buffer {
  const destination = solicitedNodeMulticast(address);
  const packet = encodeNeighborSolicitation({ source: "::", destination, target: address });
  return ndpFrame(packet, destination, undefined, mac, vlanTags);
}

/** The probe for an address of either family. */
export function probeFrame(address: string, mac: string): Buffer {
  return address.includes(":") ? dadProbeFrame(address, mac) : arpProbeFrame(address, mac);
}

/**
 * Who a frame says holds which address: the sender of an ARP frame, or the target of a Neighbor Advertisement
 * (its link-layer address, else the frame's source); undefined for any other frame.
 */
export function addressHolder(frame: Uint8Array): { ip: string; mac: string } | undefined {
  const ethernet = decodeEthernet(frame);
  if (!ethernet.ok) return undefined;
  if (ethernet.value.etherType === ETHERTYPE_ARP) {
    const arp = decodeArp(ethernet.value.payload);
    if (!arp.ok || arp.value.senderIp === "0.0.0.0") return undefined;
    return { ip: arp.value.senderIp, mac: arp.value.senderMac };
  }
  if (ethernet.value.etherType !== ETHERTYPE_IPV6) return undefined;
  const packet = decodeIPv6(ethernet.value.payload);
  if (!packet.ok) return undefined;
  const message = decodeNdp(packet.value);
  if (!message.ok || message.value.kind !== "NeighborAdvertisement") return undefined;
  return { ip: message.value.target, mac: message.value.targetLinkLayerAddress ?? ethernet.value.source };
}

/** The IPv4 part of addressHolder. */
export function arpSender(frame: Uint8Array): { ip: string; mac: string } | undefined {
  const holder = addressHolder(frame);
  return holder && !holder.ip.includes(":") ? holder : undefined;
}
