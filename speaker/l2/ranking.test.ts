import { describe, expect, test } from "vitest";
import { electAnnouncer } from "./election.ts";
import { rankNodes, RankingCache } from "./ranking.ts";

const nodes = Array.from({ length: 40 }, (_, i) => `node-${i}`);
const addresses = Array.from({ length: 60 }, (_, i) =>
  i % 2 ? `192.0.2.${i}` : `2001:db8::${i.toString(16)}`,
);

describe("ranking cache", () => {
  test("elects exactly what electAnnouncer elects, for every subset tried", () => {
    const cache = new RankingCache();
    cache.setNodes(nodes);
    for (const [i, address] of addresses.entries()) {
      const eligible = new Set(nodes.filter((_, n) => (n * 7 + i) % 3 !== 0));
      expect(cache.elect(address, eligible)).toBe(electAnnouncer(address, eligible));
    }
  });

  test("the winner is the first eligible node of the ranking", () => {
    const ranking = rankNodes("192.0.2.10", nodes);
    expect(ranking[0]).toBe(electAnnouncer("192.0.2.10", nodes));
    expect(new Set(ranking).size).toBe(nodes.length);
    const withoutWinner = new Set(nodes.filter((n) => n !== ranking[0]));
    expect(electAnnouncer("192.0.2.10", withoutWinner)).toBe(ranking[1]);
  });

  test("addresses are compared in canonical form", () => {
    const cache = new RankingCache();
    cache.setNodes(nodes);
    const eligible = new Set(nodes);
    expect(cache.elect("2001:db8::0001", eligible)).toBe(cache.elect("2001:db8::1", eligible));
  });

  test("eligible nodes the cache has not seen yet are still ranked correctly", () => {
    const cache = new RankingCache();
    cache.setNodes(nodes.slice(0, 5));
    const eligible = new Set(nodes.slice(3, 20));
    expect(cache.elect("192.0.2.77", eligible)).toBe(electAnnouncer("192.0.2.77", eligible));
  });

  test("nobody is elected from an empty set", () => {
    const cache = new RankingCache();
    cache.setNodes(nodes);
    expect(cache.elect("192.0.2.1", new Set())).toBeUndefined();
  });
});
