import { describe, expect, it } from "vitest";
import {
  arpReplyFrame,
  arpRequestFrame,
  decodeArp,
  encodeArp,
  gratuitousArpFrame,
  type ArpPacket,
} from "./arp.ts";
import { decodeEthernet } from "./ethernet.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ""), "hex");

// Written out field by field from RFC 826 (as tcpdump -xx shows them):
// "ARP, Request who-has 192.168.1.1 tell 192.168.1.100", from 00:11:22:33:44:55.
const REQUEST = hex(`
  ff ff ff ff ff ff   00 11 22 33 44 55   08 06
  00 01   08 00   06   04   00 01
  00 11 22 33 44 55   c0 a8 01 64
  00 00 00 00 00 00   c0 a8 01 01
`);

// "ARP, Reply 192.168.1.1 is-at 02:00:00:00:00:01", back to the asker.
const REPLY = hex(`
  00 11 22 33 44 55   02 00 00 00 00 01   08 06
  00 01   08 00   06   04   00 02
  02 00 00 00 00 01   c0 a8 01 01
  00 11 22 33 44 55   c0 a8 01 64
`);

function arpOf(frame: Buffer) {
  const ethernet = decodeEthernet(frame);
  if (!ethernet.ok) throw new Error(ethernet.detail);
  return decodeArp(ethernet.value.payload);
}

describe("ARP byte-exact vectors", () => {
  it("decodes the known request", () => {
    expect(arpOf(REQUEST)).toEqual({
      ok: true,
      value: {
        operation: "request",
        senderMac: "00:11:22:33:44:55",
        senderIp: "192.168.1.100",
        targetMac: "00:00:00:00:00:00",
        targetIp: "192.168.1.1",
      },
    });
  });

  it("encodes the known request and reply", () => {
    expect(
      arpRequestFrame({ senderMac: "00:11:22:33:44:55", senderIp: "192.168.1.100", targetIp: "192.168.1.1" }),
    ).toEqual(REQUEST);
    expect(
      arpReplyFrame({
        senderMac: "02:00:00:00:00:01",
        senderIp: "192.168.1.1",
        targetMac: "00:11:22:33:44:55",
        targetIp: "192.168.1.100",
      }),
    ).toEqual(REPLY);
  });

  it("encodes gratuitous ARP as RFC 5227 announcements", () => {
    expect(gratuitousArpFrame("192.168.1.1", "02:00:00:00:00:01")).toEqual(
      hex(`
        ff ff ff ff ff ff   02 00 00 00 00 01   08 06
        00 01 08 00 06 04 00 01
        02 00 00 00 00 01   c0 a8 01 01
        00 00 00 00 00 00   c0 a8 01 01
      `),
    );
    expect(gratuitousArpFrame("192.168.1.1", "02:00:00:00:00:01", "reply")).toEqual(
      hex(`
        ff ff ff ff ff ff   02 00 00 00 00 01   08 06
        00 01 08 00 06 04 00 02
        02 00 00 00 00 01   c0 a8 01 01
        02 00 00 00 00 01   c0 a8 01 01
      `),
    );
  });

  it("tags frames with the VLAN they belong to", () => {
    const frame = gratuitousArpFrame("10.0.0.1", "02:00:00:00:00:01", "request", {
      vlanTags: [{ tpid: 0x8100, priority: 0, dropEligible: false, vlanId: 42 }],
    });
    expect(frame.subarray(12, 18).toString("hex")).toBe("8100002a0806");
  });
});

describe("ARP round trips", () => {
  it("decodes what it encodes", () => {
    const packets: ArpPacket[] = [
      {
        operation: "request",
        senderMac: "aa:bb:cc:dd:ee:ff",
        senderIp: "0.0.0.0",
        targetMac: "00:00:00:00:00:00",
        targetIp: "10.1.2.3",
      },
      {
        operation: "reply",
        senderMac: "02:00:00:00:00:01",
        senderIp: "255.255.255.255",
        targetMac: "ff:ff:ff:ff:ff:ff",
        targetIp: "1.2.3.4",
      },
    ];
    for (const packet of packets) expect(decodeArp(encodeArp(packet))).toEqual({ ok: true, value: packet });
  });

  it("ignores Ethernet padding after the packet", () => {
    const padded = Buffer.concat([
      encodeArp({
        operation: "reply",
        senderMac: "02:00:00:00:00:01",
        senderIp: "10.0.0.1",
        targetMac: "02:00:00:00:00:02",
        targetIp: "10.0.0.2",
      }),
      Buffer.alloc(18),
    ]);
    expect(decodeArp(padded)).toMatchObject({ ok: true, value: { targetIp: "10.0.0.2" } });
  });

  it("refuses to encode addresses that are not IPv4", () => {
    expect(() =>
      encodeArp({
        operation: "request",
        senderMac: "02:00:00:00:00:01",
        senderIp: "fd00::1",
        targetMac: "00:00:00:00:00:00",
        targetIp: "10.0.0.1",
      }),
    ).toThrow(/not an IPv4 address/);
  });
});

describe("malformed ARP", () => {
  const payload = REQUEST.subarray(14);
  const mutate = (offset: number, value: number) => {
    const copy = Buffer.from(payload);
    copy[offset] = value;
    return copy;
  };

  it.each([
    ["Truncated", Buffer.alloc(0)],
    ["Truncated", payload.subarray(0, 7)],
    ["Truncated", payload.subarray(0, 27)],
    ["UnsupportedHardwareType", mutate(1, 6)],
    ["UnsupportedProtocolType", mutate(2, 0x86)],
    ["BadHardwareLength", mutate(4, 8)],
    ["BadProtocolLength", mutate(5, 16)],
    ["UnknownArpOperation", mutate(7, 3)],
    ["UnknownArpOperation", mutate(7, 0)],
  ] as const)("reports %s", (reason, bytes) => {
    const decoded = decodeArp(bytes);
    expect(decoded).toMatchObject({ ok: false, reason });
    expect(decoded.ok ? "" : decoded.detail).not.toBe("");
  });
});
