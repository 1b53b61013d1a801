import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { Fact } from "./messages.ts";
import { MembershipView, supersedes } from "./view.ts";

const alive = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "alive" });
const dead = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "dead" });
const left = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "left" });
const restarting = (node: string, incarnation: number): Fact => ({ node, incarnation, status: "restarting" });

describe("membership view", () => {
  test("beliefs are ordered by incarnation, then left > dead > alive", () => {
    expect(supersedes(alive("a", 2), dead("a", 1))).toBe(true);
    expect(supersedes(dead("a", 1), alive("a", 1))).toBe(true);
    expect(supersedes(alive("a", 1), dead("a", 1))).toBe(false);
    expect(supersedes(left("a", 1), dead("a", 1))).toBe(true);
    expect(supersedes(dead("a", 1), left("a", 1))).toBe(false);
    expect(supersedes(alive("a", 1), alive("a", 1))).toBe(false);
  });

  test("a restarting node outranks a rumour of its death, a departure outranks it, and its next run it all", () => {
    expect(supersedes(restarting("a", 1), alive("a", 1))).toBe(true);
    expect(supersedes(restarting("a", 1), dead("a", 1))).toBe(true);
    expect(supersedes(dead("a", 1), restarting("a", 1))).toBe(false);
    expect(supersedes(left("a", 1), restarting("a", 1))).toBe(true);
    expect(supersedes(alive("a", 2), restarting("a", 1))).toBe(true);
  });

  test("a restarting node keeps its addresses (a member) but leaves the ring of probes", () => {
    const view = new MembershipView("a", 1);
    for (const fact of [alive("b", 1), alive("c", 1), alive("d", 1)]) view.merge(fact);
    const before = view.digest();
    expect(view.merge(restarting("c", 1))).toBe("changed");
    expect(view.members()).toEqual(["a", "b", "c", "d"]);
    expect(view.live()).toEqual(["a", "b", "d"]);
    expect(view.successors(2)).toEqual(["b", "d"]);
    // A view that believes it dead differs in digest, so the two exchange views and the restart wins.
    const other = new MembershipView("b", 1);
    for (const fact of [alive("a", 1), alive("d", 1), dead("c", 1)]) other.merge(fact);
    expect(other.digest()).not.toBe(view.digest());
    expect(view.digest()).not.toBe(before);
    other.merge(restarting("c", 1));
    expect(other.members()).toEqual(["a", "b", "c", "d"]);
    // The new run joins with a later incarnation and is live again.
    view.merge(alive("c", 2));
    expect(view.live()).toEqual(["a", "b", "c", "d"]);
  });

  test("the digest of live nodes only is the one older speakers compute", () => {
    const view = new MembershipView("a", 1);
    view.merge(alive("b", 3));
    const older = createHash("sha256").update("a\u00001\u0000").update("b\u00003\u0000").digest("base64");
    expect(view.digest()).toBe(older.slice(0, 16));
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
