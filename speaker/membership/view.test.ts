import { describe, expect, test } from "vitest";
import type { Fact } from "./messages.ts";
import { MembershipView, supersedes } from "./view.ts";

const alive = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "alive" });
const dead = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "dead" });
const left = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "left" });

describe("membership view", () => {
  test("beliefs are ordered by incarnation, then left > dead > alive", () => {
    expect(supersedes(alive("a", 2), dead("a", 1))).toBe(true);
    expect(supersedes(dead("a", 1), alive("a", 1))).toBe(true);
    expect(supersedes(alive("a", 1), dead("a", 1))).toBe(false);
    expect(supersedes(left("a", 1), dead("a", 1))).toBe(true);
    expect(supersedes(dead("a", 1), left("a", 1))).toBe(false);
    expect(supersedes(alive("a", 1), alive("a", 1))).toBe(false);
  });

  test("views converge to the same live set whatever order facts arrive in", () => {
    const facts = [
      alive("b", 1),
      dead("b", 1),
      alive("c", 5),
      alive("b", 2),
      left("d", 3),
      alive("d", 2),
      dead("c", 4),
    ];
    const orders = [
      facts,
      [...facts].reverse(),
      [facts[3]!, facts[1]!, facts[0]!, ...facts.slice(4), facts[2]!],
    ];
    const results = orders.map((order) => {
      const view = new MembershipView("a", 1);
      for (const fact of order) view.merge(fact);
      return { live: view.live(), digest: view.digest() };
    });
    expect(results[0]).toEqual({ live: ["a", "b", "c"], digest: results[0]!.digest });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  test("a rumour of its own death makes a node refute with a higher incarnation", () => {
    const view = new MembershipView("a", 10);
    expect(view.merge(dead("a", 10))).toBe("refute");
    expect(view.incarnation).toBe(11);
    expect(view.merge(dead("a", 10))).toBe("unchanged");
    expect(view.merge(alive("a", 11))).toBe("unchanged");
    expect(view.merge(alive("a", 12))).toBe("refute");
    expect(view.incarnation).toBe(13);
  });

  test("the digest changes with the live set and the incarnations", () => {
    const view = new MembershipView("a", 1);
    const empty = view.digest();
    view.merge(alive("b", 1));
    const withB = view.digest();
    expect(withB).not.toBe(empty);
    view.merge(alive("b", 2));
    expect(view.digest()).not.toBe(withB);
    view.merge(dead("b", 2));
    expect(view.digest()).toBe(empty);
  });

  test("successors and predecessors on the ring of live names", () => {
    const view = new MembershipView("c", 1);
    for (const node of ["a", "b", "d", "e"]) view.merge(alive(node, 1));
    expect(view.successors(2)).toEqual(["d", "e"]);
    expect(view.predecessors(2)).toEqual(["b", "a"]);
    view.merge(dead("d", 1));
    expect(view.successors(2)).toEqual(["e", "a"]);
    const pair = new MembershipView("x", 1);
    pair.merge(alive("y", 1));
    expect(pair.successors(2)).toEqual(["y"]);
    expect(new MembershipView("alone", 1).successors(2)).toEqual([]);
  });

  test("beliefs about nodes gone from Kubernetes are dropped", () => {
    const view = new MembershipView("a", 1);
    view.merge(alive("b", 1));
    view.merge(alive("c", 1));
    expect(view.retain(new Set(["b"]))).toBe(true);
    expect(view.live()).toEqual(["a", "b"]);
  });
});
