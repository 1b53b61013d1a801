// The frames a speaker broadcasts when it takes an address over, so that hosts and switches on the
// segment repoint the address to this node immediately instead of waiting for their caches to expire.
import { parseIP } from "../../shared/address.ts";
import { gratuitousArpFrame } from "./arp.ts";
import { encodeEthernet, ETHERTYPE_IPV6, type VlanTag } from "./ethernet.ts";
import { ipv6MulticastMac } from "./mac.ts";
import { ALL_NODES, encodeNeighborAdvertisement } from "./ndp.ts";
import { ipv6Bytes } from "./ipv6.ts";

/** An IPv6 packet and its Ethernet frame, to a unicast or multicast destination. */
export function ndpFrame(
  packet: Buffer,
  destinationIp: string,
  destinationMac: string | undefined,
  sourceMac: string,
  vlanTags: readonly VlanTag[] = [],
): Buffer {
  return encodeEthernet({
    destination: destinationMac ?? ipv6MulticastMac(ipv6Bytes(destinationIp)),
    source: sourceMac,
    vlanTags,
    etherType: ETHERTYPE_IPV6,
    payload: packet,
  });
}

/**
 * Unsolicited Neighbor Advertisement to all nodes (RFC 4861 §7.2.6): Solicited clear, Override set so
 * receivers replace the old link-layer address, with the target link-layer address option.
 */
export function unsolicitedNeighborAdvertisementFrame(
  address: string,
  mac: string,
  vlanTags: readonly VlanTag[] = [],
): Buffer {
  const packet = encodeNeighborAdvertisement({
    source: address,
    destination: ALL_NODES,
    target: address,
    solicited: false,
    override: true,
    targetLinkLayerAddress: mac,
  });
  return ndpFrame(packet, ALL_NODES, undefined, mac, vlanTags);
}

/**
 * Everything to broadcast on takeover of `address`: for IPv4 a gratuitous ARP request and reply (some
 * devices only update on one of them), for IPv6 an unsolicited Neighbor Advertisement.
 */
export function takeoverFrames(address: string, mac: string, vlanTags: readonly VlanTag[] = []): Buffer[] {
  const parsed = parseIP(address);
  if (!parsed.ok) throw new TypeError(parsed.problem);
  if (parsed.value.family === "IPv4") {
    return [
      gratuitousArpFrame(parsed.value.text, mac, "request", { vlanTags }),
      gratuitousArpFrame(parsed.value.text, mac, "reply", { vlanTags }),
    ];
  }
  return [unsolicitedNeighborAdvertisementFrame(parsed.value.text, mac, vlanTags)];
}
