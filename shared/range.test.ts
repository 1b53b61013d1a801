import { describe, expect, it } from "vitest";
import { canonicalIP, formatIPBytes, ipBytes, parseIP } from "./address.ts";
import {
  buggyCount,
  formatRange,
  hostBits,
  isBuggyIPv4,
  parseRangeEntry,
  rangeIntersection,
  rangeSize,
} from "./range.ts";

function range(entry: string) {
  const parsed = parseRangeEntry(entry);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

function problemOf(entry: string): string {
  const parsed = parseRangeEntry(entry);
  if (parsed.ok) throw new Error(`expected ${entry} to be rejected`);
  return parsed.problem;
}

describe("parseIP", () => {
  it("canonicalizes IPv4 and IPv6 text", () => {
    expect(canonicalIP("192.168.1.1")).toBe("192.168.1.1");
    expect(canonicalIP("FD00:0::0001")).toBe("fd00::1");
    expect(canonicalIP("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
  });

  it("rejects networks, zones, mapped addresses and garbage with a reason", () => {
    const problem = (text: string) => {
      const parsed = parseIP(text);
      return parsed.ok ? "accepted" : parsed.problem;
    };
    expect(problem("10.0.0.0/24")).toMatch(/network, not a single address/);
    expect(problem("fe80::1%eth0")).toMatch(/zone/);
    expect(problem("::ffff:10.0.0.1")).toMatch(/IPv4-mapped/);
    expect(problem("010.0.0.1")).toMatch(/not a valid/);
    expect(problem("10.0.0")).toMatch(/not a valid/);
    expect(problem("")).toMatch(/not a valid/);
  });

  it("converts to and from network-order bytes", () => {
    const v6 = parseIP("fd00::1");
    const v4 = parseIP("10.1.2.3");
    if (!v6.ok || !v4.ok) throw new Error("unparsable");
    expect([...ipBytes(v4.value)]).toEqual([10, 1, 2, 3]);
    expect(ipBytes(v6.value)).toHaveLength(16);
    expect(formatIPBytes(ipBytes(v6.value))).toBe("fd00::1");
    expect(formatIPBytes(Uint8Array.from([0, 0, 0, 0]))).toBe("0.0.0.0");
  });
});

describe("parseRangeEntry", () => {
  it("parses IPv4 and IPv6 CIDRs into inclusive bounds", () => {
    expect(range("192.168.10.0/24")).toEqual({ family: "IPv4", first: 0xc0a80a00n, last: 0xc0a80affn });
    const v6 = range("fd00::/120");
    expect(v6.family).toBe("IPv6");
    expect(rangeSize(v6)).toBe(256n);
    expect(rangeSize(range("10.0.0.7/32"))).toBe(1n);
    expect(rangeSize(range("0.0.0.0/0"))).toBe(2n ** 32n);
    expect(rangeSize(range("::/0"))).toBe(2n ** 128n);
  });

  it("parses first-last ranges, with or without spaces around the dash", () => {
    expect(rangeSize(range("192.168.10.10-192.168.10.20"))).toBe(11n);
    expect(rangeSize(range(" 192.168.10.10 - 192.168.10.10 "))).toBe(1n);
    expect(rangeSize(range("fd00::1-fd00::ff"))).toBe(255n);
  });

  it("explains every rejected entry and how to fix it", () => {
    expect(problemOf("192.168.1.10/24")).toMatch(/host bits set; did you mean "192.168.1.0\/24"/);
    expect(problemOf("fd00::5/120")).toMatch(/did you mean "fd00::\/120"/);
    expect(problemOf("192.168.1.0/33")).toMatch(/at most \/32/);
    expect(problemOf("fd00::/129")).toMatch(/at most \/128/);
    expect(problemOf("192.168.1.0/")).toMatch(/invalid prefix length/);
    expect(problemOf("192.168.1.0/x")).toMatch(/invalid prefix length/);
    expect(problemOf("10.0.0.9-10.0.0.1")).toMatch(/starts after it ends; write "10.0.0.1-10.0.0.9"/);
    expect(problemOf("10.0.0.1-fd00::1")).toMatch(/mixes IPv4 and IPv6/);
    expect(problemOf("10.0.0.1-10.0.0.2-10.0.0.3")).toMatch(/first-last/);
    expect(problemOf("10.0.0.1-banana")).toMatch(/range end/);
    expect(problemOf("banana-10.0.0.1")).toMatch(/range start/);
    expect(problemOf("10.0.0.1")).toMatch(/write "10.0.0.1\/32"/);
    expect(problemOf("fd00::1")).toMatch(/write "fd00::1\/128"/);
    expect(problemOf("   ")).toMatch(/empty/);
  });

  it("formats ranges back for messages", () => {
    expect(formatRange(range("10.0.0.0/30"))).toBe("10.0.0.0-10.0.0.3");
    expect(formatRange(range("fd00::1/128"))).toBe("fd00::1");
  });

  it("intersects ranges of one family only", () => {
    const overlap = rangeIntersection(range("10.0.0.0/24"), range("10.0.0.200-10.0.1.5"));
    expect(overlap && formatRange(overlap)).toBe("10.0.0.200-10.0.0.255");
    expect(rangeIntersection(range("10.0.0.0/24"), range("10.0.1.0/24"))).toBeUndefined();
    expect(rangeIntersection(range("0.0.0.0/0"), range("::/0"))).toBeUndefined();
  });
});

describe("buggy IPv4 addresses (.0 and .255)", () => {
  it("are recognised only in IPv4", () => {
    expect(isBuggyIPv4("IPv4", 0x0a000000n)).toBe(true);
    expect(isBuggyIPv4("IPv4", 0x0a0000ffn)).toBe(true);
    expect(isBuggyIPv4("IPv4", 0x0a000001n)).toBe(false);
    expect(isBuggyIPv4("IPv6", 0xffn)).toBe(false);
  });

  it("are counted exactly, matching a brute-force count", () => {
    const cases = [
      "10.0.0.0/24",
      "10.0.0.0/16",
      "10.0.0.0/25",
      "10.0.0.128/25",
      "10.0.0.1-10.0.0.254",
      "10.0.0.255-10.0.1.0",
      "0.0.0.0-0.0.0.0",
      "10.0.0.250-10.0.3.5",
    ];
    for (const entry of cases) {
      const r = range(entry);
      let brute = 0n;
      for (let v = r.first; v <= r.last; v++) if (isBuggyIPv4("IPv4", v)) brute++;
      expect(buggyCount(r), entry).toBe(brute);
    }
    expect(buggyCount(range("10.0.0.0/8"))).toBe(2n * 65536n);
    expect(buggyCount(range("fd00::/120"))).toBe(0n);
  });
});

describe("hostBits", () => {
  it("a CIDR written as its network has none; otherwise both readings are offered, per family", () => {
    expect(hostBits("10.0.0.0/8")).toBeUndefined();
    expect(hostBits("10.0.0.1/8")).toEqual({ network: "10.0.0.0/8", single: "10.0.0.1/32" });
    expect(hostBits("2001:db8::/32")).toBeUndefined();
    expect(hostBits("2001:db8::1/32")).toEqual({ network: "2001:db8::/32", single: "2001:db8::1/128" });
  });
});
