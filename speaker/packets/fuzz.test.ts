// Hostile-input check: every decoder and respond() must return a result, never throw, whatever bytes
// arrive. A seeded PRNG and a fixed iteration count make every run test the same inputs.
import { describe, expect, it } from "vitest";
import { arpRequestFrame, decodeArp, gratuitousArpFrame } from "./arp.ts";
import { ndpFrame, unsolicitedNeighborAdvertisementFrame } from "./announce.ts";
import { decodeEthernet } from "./ethernet.ts";
import { decodeIPv6 } from "./ipv6.ts";
import { decodeNdp, encodeNeighborSolicitation } from "./ndp.ts";
import { respond } from "./respond.ts";

const ITERATIONS = 20_000;
const OUR_MAC = "02:00:00:00:00:01";
const owned = new Set(["10.0.0.1", "fd00::10"]);

/** mulberry32: tiny, well-known, deterministic. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const tag = [{ tpid: 0x8100, priority: 0, dropEligible: false, vlanId: 7 }];
const seeds: Buffer[] = [
  arpRequestFrame({ senderMac: "00:11:22:33:44:55", senderIp: "10.0.0.9", targetIp: "10.0.0.1" }),
  arpRequestFrame(
    { senderMac: "00:11:22:33:44:55", senderIp: "10.0.0.9", targetIp: "10.0.0.1" },
    { vlanTags: tag },
  ),
  gratuitousArpFrame("10.0.0.1", "00:11:22:33:44:55", "reply"),
  ndpFrame(
    encodeNeighborSolicitation({
      source: "fe80::1",
      target: "fd00::10",
      sourceLinkLayerAddress: "00:11:22:33:44:55",
    }),
    "ff02::1:ff00:10",
    undefined,
    "00:11:22:33:44:55",
  ),
  ndpFrame(
    encodeNeighborSolicitation({ source: "::", target: "fd00::10" }),
    "ff02::1:ff00:10",
    undefined,
    "00:11:22:33:44:55",
    tag,
  ),
  unsolicitedNeighborAdvertisementFrame("fd00::10", "00:11:22:33:44:55"),
];

function mutate(random: () => number): Uint8Array {
  const pick = (n: number) => Math.floor(random() * n);
  const seed = seeds[pick(seeds.length)] ?? Buffer.alloc(0);
  switch (pick(5)) {
    case 0: {
      // Pure noise, with a plausible EtherType half the time so deeper decoders are reached.
      const bytes = Buffer.from(Array.from({ length: pick(120) }, () => pick(256)));
      if (bytes.length >= 14 && random() < 0.5)
        bytes.writeUInt16BE([0x0806, 0x86dd, 0x8100][pick(3)] ?? 0, 12);
      return bytes;
    }
    case 1:
      return seed.subarray(0, pick(seed.length + 1));
    case 2: {
      const bytes = Buffer.from(seed);
      for (let flips = 1 + pick(4); flips > 0; flips--) {
        const at = pick(bytes.length);
        bytes[at] = (bytes[at] ?? 0) ^ (1 << pick(8));
      }
      return bytes;
    }
    case 3: {
      const bytes = Buffer.from(seed);
      bytes[pick(bytes.length)] = pick(256);
      return bytes.subarray(0, bytes.length - pick(8));
    }
    default:
      return Buffer.concat([seed, Buffer.from(Array.from({ length: pick(40) }, () => pick(256)))]);
  }
}

describe("decoders on hostile input", () => {
  it(`never throw over ${ITERATIONS} seeded random and mutated frames`, () => {
    const random = prng(0x5eed);
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    for (let i = 0; i < ITERATIONS; i++) {
      const input = mutate(random);
      const ethernet = decodeEthernet(input);
      count(ethernet.ok ? "ethernet" : `ethernet:${ethernet.reason}`);
      const payload = ethernet.ok ? ethernet.value.payload : input;
      const arp = decodeArp(payload);
      count(arp.ok ? "arp" : `arp:${arp.reason}`);
      const ipv6 = decodeIPv6(payload);
      if (ipv6.ok) {
        const ndp = decodeNdp(ipv6.value);
        count(ndp.ok ? `ndp:${ndp.value.kind}` : `ndp:${ndp.reason}`);
      }
      const response = respond(input, owned, OUR_MAC);
      count(
        `respond:${response.action}:${response.action === "reply" ? response.protocol : response.reason}`,
      );
    }
    const actions = new Set(
      [...outcomes.keys()].filter((k) => k.startsWith("respond:")).map((k) => k.split(":")[1]),
    );
    expect([...actions].sort()).toEqual(["drop", "ignore", "reply"]);
    // The inputs really exercised the paths: valid decodes, replies of both kinds and many rejections.
    for (const key of [
      "arp",
      "ndp:NeighborSolicitation",
      "ndp:BadChecksum",
      "arp:UnsupportedHardwareType",
      "ethernet:Truncated",
      "respond:reply:arp",
      "respond:reply:ndp",
      "respond:drop:BadChecksum",
      "respond:ignore:NotOwned",
    ]) {
      expect(outcomes.get(key) ?? 0, key).toBeGreaterThan(0);
    }
  });
});
