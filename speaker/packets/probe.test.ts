import { describe, expect, test } from "vitest";
import { arpReplyFrame, decodeArp } from "./arp.ts";
import { decodeEthernet } from "./ethernet.ts";
import { ndpFrame } from "./announce.ts";
import { decodeIPv6 } from "./ipv6.ts";
import { decodeNdp, encodeNeighborAdvertisement } from "./ndp.ts";
import { addressHolder, arpProbeFrame, arpSender, dadProbeFrame } from "./probe.ts";

describe("ARP probes (RFC 5227)", () => {
  test("a probe asks for the address from 0.0.0.0, broadcast, with a zero target MAC", () => {
    const frame = decodeEthernet(arpProbeFrame("192.0.2.7", "02:00:00:00:00:01"));
    expect(frame.ok && frame.value.destination).toBe("ff:ff:ff:ff:ff:ff");
    const arp = frame.ok ? decodeArp(frame.value.payload) : undefined;
    expect(arp?.ok && arp.value).toEqual({
      operation: "request",
      senderMac: "02:00:00:00:00:01",
      senderIp: "0.0.0.0",
      targetMac: "00:00:00:00:00:00",
      targetIp: "192.0.2.7",
    });
  });

  test("the sender of a reply is who holds the address; a probe (from 0.0.0.0) names nobody", () => {
    const reply = arpReplyFrame({
      senderMac: "02:00:00:00:00:99",
      senderIp: "192.0.2.7",
      targetMac: "02:00:00:00:00:01",
      targetIp: "0.0.0.0",
    });
    expect(arpSender(reply)).toEqual({ ip: "192.0.2.7", mac: "02:00:00:00:00:99" });
    expect(arpSender(arpProbeFrame("192.0.2.7", "02:00:00:00:00:01"))).toBeUndefined();
    expect(arpSender(Buffer.alloc(10))).toBeUndefined();
  });
});

describe("IPv6 duplicate address detection (RFC 4862)", () => {
  test("a probe is a Neighbor Solicitation from :: to the solicited-node group, without a link-layer option", () => {
    const frame = decodeEthernet(dadProbeFrame("2001:db8::7", "02:00:00:00:00:01"));
    expect(frame.ok && frame.value.destination).toBe("33:33:ff:00:00:07");
    const packet = frame.ok ? decodeIPv6(frame.value.payload) : undefined;
    const message = packet?.ok ? decodeNdp(packet.value) : undefined;
    expect(message?.ok && message.value).toEqual({
      kind: "NeighborSolicitation",
      ipSource: "::",
      ipDestination: "ff02::1:ff00:7",
      target: "2001:db8::7",
      isDad: true,
    });
  });

  test("an advertisement for the address names its holder; the holder of an ARP frame is only IPv4's", () => {
    const advertisement = encodeNeighborAdvertisement({
      source: "2001:db8::7",
      destination: "ff02::1",
      target: "2001:db8::7",
      solicited: false,
      override: true,
      targetLinkLayerAddress: "02:00:00:00:00:99",
    });
    const frame = ndpFrame(advertisement, "ff02::1", undefined, "02:00:00:00:00:98");
    expect(addressHolder(frame)).toEqual({ ip: "2001:db8::7", mac: "02:00:00:00:00:99" });
    expect(arpSender(frame)).toBeUndefined();
    expect(addressHolder(dadProbeFrame("2001:db8::7", "02:00:00:00:00:01"))).toBeUndefined();
  });
});
