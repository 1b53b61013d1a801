import { describe, expect, it } from "vitest";
import { decodeEthernet, encodeEthernet, ETHERTYPE_ARP, ETHERTYPE_QINQ, ETHERTYPE_VLAN } from "./ethernet.ts";
import { formatMac, ipv6MulticastMac, isMac, macBytes, normalizeMac } from "./mac.ts";

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ""), "hex");

describe("MAC addresses", () => {
  it("round-trips text and bytes, lowercased", () => {
    expect(formatMac(macBytes("AA:bb:0C:dd:ee:0F"))).toBe("aa:bb:0c:dd:ee:0f");
    expect(normalizeMac("02:00:00:00:00:0A")).toBe("02:00:00:00:00:0a");
    expect(isMac("aa:bb:cc:dd:ee")).toBe(false);
    expect(isMac("aa-bb-cc-dd-ee-ff")).toBe(false);
    expect(() => macBytes("nope")).toThrow(/not a MAC address/);
  });

  it("maps IPv6 multicast to 33:33 plus the low 32 bits (RFC 2464)", () => {
    expect(ipv6MulticastMac(hex("ff020000000000000000000000000001"))).toBe("33:33:00:00:00:01");
    expect(ipv6MulticastMac(hex("ff0200000000000000000001ff000010"))).toBe("33:33:ff:00:00:10");
  });
});

describe("decodeEthernet", () => {
  it("decodes an untagged frame", () => {
    const frame = hex("ffffffffffff 001122334455 0806 c0ffee");
    const decoded = decodeEthernet(frame);
    expect(
      decoded.ok && { ...decoded.value, payload: Buffer.from(decoded.value.payload).toString("hex") },
    ).toEqual({
      destination: "ff:ff:ff:ff:ff:ff",
      source: "00:11:22:33:44:55",
      vlanTags: [],
      etherType: ETHERTYPE_ARP,
      payload: "c0ffee",
    });
  });

  it("decodes and skips an 802.1Q tag (PCP 5, DEI 1, VID 100)", () => {
    // TCI = 101 1 000001100100 = 0xb064
    const decoded = decodeEthernet(hex("ffffffffffff 001122334455 8100 b064 0806 aa"));
    expect(decoded.ok && decoded.value.vlanTags).toEqual([
      { tpid: ETHERTYPE_VLAN, priority: 5, dropEligible: true, vlanId: 100 },
    ]);
    expect(decoded.ok && decoded.value.etherType).toBe(ETHERTYPE_ARP);
    expect(decoded.ok && [...decoded.value.payload]).toEqual([0xaa]);
  });

  it("decodes QinQ (802.1ad outer, 802.1Q inner)", () => {
    const decoded = decodeEthernet(hex("ffffffffffff 001122334455 88a8 000a 8100 0014 86dd"));
    expect(decoded.ok && decoded.value.vlanTags.map((t) => [t.tpid, t.vlanId])).toEqual([
      [ETHERTYPE_QINQ, 10],
      [ETHERTYPE_VLAN, 20],
    ]);
    expect(decoded.ok && decoded.value.payload.length).toBe(0);
  });

  it("reports truncated and over-tagged frames", () => {
    expect(decodeEthernet(hex("ffffffffffff0011223344"))).toMatchObject({ ok: false, reason: "Truncated" });
    expect(decodeEthernet(hex("ffffffffffff 001122334455 8100 00"))).toMatchObject({
      ok: false,
      reason: "Truncated",
    });
    expect(decodeEthernet(hex("ffffffffffff 001122334455 8100 0001"))).toMatchObject({
      ok: false,
      reason: "Truncated",
    });
    expect(decodeEthernet(hex("ffffffffffff 001122334455 8100 0001 8100 0002 8100 0003 0806"))).toMatchObject(
      {
        ok: false,
        reason: "TooManyVlanTags",
      },
    );
  });
});

describe("encodeEthernet", () => {
  it("writes the exact header, tags included", () => {
    const frame = encodeEthernet({
      destination: "00:11:22:33:44:55",
      source: "02:00:00:00:00:01",
      vlanTags: [{ tpid: ETHERTYPE_VLAN, priority: 5, dropEligible: true, vlanId: 100 }],
      etherType: ETHERTYPE_ARP,
      payload: hex("beef"),
    });
    expect(frame.toString("hex")).toBe("001122334455" + "020000000001" + "8100b064" + "0806" + "beef");
  });

  it("round-trips through decode", () => {
    const input = {
      destination: "33:33:00:00:00:01",
      source: "02:00:00:00:00:01",
      vlanTags: [
        { tpid: ETHERTYPE_QINQ, priority: 7, dropEligible: false, vlanId: 4095 },
        { tpid: ETHERTYPE_VLAN, priority: 0, dropEligible: false, vlanId: 1 },
      ],
      etherType: 0x86dd,
    };
    const decoded = decodeEthernet(encodeEthernet({ ...input, payload: hex("0102") }));
    expect(decoded.ok && { ...decoded.value, payload: [...decoded.value.payload] }).toEqual({
      ...input,
      payload: [1, 2],
    });
  });
});
