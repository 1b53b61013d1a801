// Address conflict detection the way hosts do it (RFC 5227 §2.1): an ARP Probe asks who has an address with
// sender IP 0.0.0.0, so no neighbour's cache learns anything from it, and any ARP from that address (a reply,
// or the owner's own traffic) by a MAC that is not ours means another host uses it.
import { decodeArp, encodeArp } from "./arp.ts";
import { encodeEthernet, decodeEthernet, ETHERTYPE_ARP, type VlanTag } from "./ethernet.ts";
import { BROADCAST_MAC, ZERO_MAC } from "./mac.ts";

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

/** Who an ARP frame says holds which address (its sender), or undefined for any other frame. */
export function arpSender(frame: Uint8Array): { ip: string; mac: string } | undefined {
  const ethernet = decodeEthernet(frame);
  if (!ethernet.ok || ethernet.value.etherType !== ETHERTYPE_ARP) return undefined;
  const arp = decodeArp(ethernet.value.payload);
  if (!arp.ok || arp.value.senderIp === "0.0.0.0") return undefined;
  return { ip: arp.value.senderIp, mac: arp.value.senderMac };
}
