import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { addressesWonBy, electAnnouncer, electAnnouncers, rendezvousWeight } from "./election.ts";

const nodes = Array.from({ length: 10 }, (_, i) => `node-${i}`);
// A fixed set: the same 10,000 addresses every run, so the statistics below are deterministic.
const addresses = Array.from(
  { length: 10_000 },
  (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
);

function countsByNode(announcers: Map<string, string | undefined>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const winner of announcers.values()) if (winner) counts.set(winner, (counts.get(winner) ?? 0) + 1);
  return counts;
}

describe("rendezvousWeight", () => {
  it("is the first 64 bits of SHA-256 over node NUL address", () => {
    const digest = createHash("sha256").update("node-a\u000010.0.0.1").digest("hex");
    expect(rendezvousWeight("node-a", "10.0.0.1")).toBe(BigInt(`0x${digest.slice(0, 16)}`));
  });

  it("depends on both node and address", () => {
    expect(rendezvousWeight("a", "10.0.0.1")).not.toBe(rendezvousWeight("b", "10.0.0.1"));
    expect(rendezvousWeight("a", "10.0.0.1")).not.toBe(rendezvousWeight("a", "10.0.0.2"));
  });
});

describe("electAnnouncer", () => {
  it("picks the node with the highest weight", () => {
    const weights = nodes.map((node) => [node, rendezvousWeight(node, "192.168.1.10")] as const);
    const best = weights.reduce((a, b) => (b[1] > a[1] ? b : a));
    expect(electAnnouncer("192.168.1.10", nodes)).toBe(best[0]);
  });

  it("returns undefined without eligible nodes, and the only node when there is one", () => {
    expect(electAnnouncer("10.0.0.1", [])).toBeUndefined();
    expect(electAnnouncer("10.0.0.1", ["solo"])).toBe("solo");
  });

  it("is deterministic and independent of input order and duplicates", () => {
    const sample = addresses.slice(0, 500);
    const expected = sample.map((address) => electAnnouncer(address, nodes));
    expect(sample.map((address) => electAnnouncer(address, [...nodes].reverse()))).toEqual(expected);
    const shuffled = [...nodes.slice(5), ...nodes, ...nodes.slice(0, 5)];
    expect(sample.map((address) => electAnnouncer(address, shuffled))).toEqual(expected);
    // Repeated calls give the same answer.
    expect(sample.map((address) => electAnnouncer(address, nodes))).toEqual(expected);
  });

  it("treats different spellings of one address as the same address", () => {
    expect(electAnnouncer("FD00:0::0001", nodes)).toBe(electAnnouncer("fd00::1", nodes));
  });
});

describe("electAnnouncers", () => {
  const baseline = electAnnouncers(addresses, nodes);

  it("spreads addresses evenly across nodes", () => {
    const counts = countsByNode(baseline);
    expect(counts.size).toBe(10);
    // 1,000 each on average; the result is fixed for this fixed input and sits well inside ±10%.
    for (const [node, count] of counts) {
      expect(count, node).toBeGreaterThan(900);
      expect(count, node).toBeLessThan(1100);
    }
  });

  it("moves only the addresses the joining node wins", () => {
    const before = baseline;
    const after = electAnnouncers(addresses, [...nodes, "node-new"]);
    const moves = [...after].filter(([address, winner]) => winner !== before.get(address));
    expect(moves.filter(([, winner]) => winner !== "node-new")).toEqual([]);
    const moved = moves.length;
    // The newcomer takes about 1/11 of the addresses, from every node.
    expect(moved).toBe(addressesWonBy("node-new", after).length);
    expect(moved).toBeGreaterThan(750);
    expect(moved).toBeLessThan(1050);
  });

  it("moves only the addresses of the node that leaves", () => {
    const before = baseline;
    const remaining = nodes.filter((node) => node !== "node-3");
    const after = electAnnouncers(addresses, remaining);
    const wrong = [...after].filter(([address, winner]) => {
      const previous = before.get(address);
      // Addresses node-3 held go to some remaining node; every other address stays where it was.
      return previous === "node-3" ? winner === undefined || winner === "node-3" : winner !== previous;
    });
    expect(wrong).toEqual([]);
    expect([...after.values()].filter((winner) => winner === "node-3")).toEqual([]);
  });

  it("accepts per-address eligibility and canonicalizes keys", () => {
    const result = electAnnouncers(["10.0.0.1", "FD00::1", "fd00::0001"], (address) =>
      address === "10.0.0.1" ? ["only-here"] : [],
    );
    expect([...result.entries()]).toEqual([
      ["10.0.0.1", "only-here"],
      ["fd00::1", undefined],
    ]);
  });

  it("lists what one node must announce", () => {
    const result = electAnnouncers(addresses.slice(0, 100), nodes);
    const all = nodes.flatMap((node) => addressesWonBy(node, result));
    expect(all.sort()).toEqual([...result.keys()].sort());
  });
});
