import { describe, expect, test } from "vitest";
import { arpReplyFrame, decodeArp } from "./arp.ts";
import { decodeEthernet } from "./ethernet.ts";
import { arpProbeFrame, arpSender } from "./probe.ts";

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
