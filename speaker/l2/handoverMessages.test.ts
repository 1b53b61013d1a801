import { afterEach, describe, expect, test, vi } from "vitest";
import { Handovers } from "./handoverMessages.ts";

const INTERVAL = 100;
const MAX_HOLD = 2000;

interface Told {
  readonly node: string;
  readonly type: "handover" | "answering";
  readonly addresses: readonly string[];
  readonly macs?: readonly string[];
}

/** A node's hand-over state with a fake clock and a record of what it sent. */
function node(self: string) {
  let now = 1_000_000;
  const told: Told[] = [];
  const answering = new Set<string>();
  let changes = 0;
  const handovers = new Handovers({
    self,
    intervalMs: INTERVAL,
    maxHoldMs: MAX_HOLD,
    now: () => now,
    tell: (node, type, addresses, macs) =>
      told.push({ node, type, addresses: [...addresses], ...(macs ? { macs: [...macs] } : {}) }),
    macs: () => [`${self}-mac`],
    answering: () => answering,
    changed: () => changes++,
  });
  return {
    handovers,
    told,
    answering,
    changes: () => changes,
    advance: (ms: number) => {
      now += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}

const every = undefined;
const turn = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("Handovers as the node that loses an address", () => {
  test("asks the new announcer at once, keeps answering, and lets go on its word", () => {
    vi.useFakeTimers();
    const old = node("node-a");
    const won = new Map();
    const answering = new Map([["192.0.2.1", every]]);
    const winners = new Map([["192.0.2.1", "node-b"]]);

    const first = old.handovers.plan(won, answering, winners);
    expect([...first.answer.keys()]).toEqual(["192.0.2.1"]);
    // Naming its MACs, so that its answers to node-b's conflict probes are not taken for another host's.
    expect(old.told).toEqual([
      { node: "node-b", type: "handover", addresses: ["192.0.2.1"], macs: ["node-a-mac"] },
    ]);

    // Planning again (another event) asks nobody again: the timer repeats the question.
    old.handovers.plan(won, answering, winners);
    expect(old.told).toHaveLength(1);
    old.advance(INTERVAL);
    expect(old.told).toHaveLength(2);

    // A word from another node does not count.
    old.handovers.received({ type: "answering", from: "node-c", addresses: ["192.0.2.1"] });
    expect(old.changes()).toBe(0);
    old.handovers.received({ type: "answering", from: "node-b", addresses: ["192.0.2.1"] });
    expect(old.changes()).toBe(1);
    const after = old.handovers.plan(won, answering, winners);
    expect(after.answer.size).toBe(0);
    expect(after.released).toEqual([{ address: "192.0.2.1", reason: "confirmed", to: "node-b" }]);
    expect(old.handovers.holding.size).toBe(0);

    // No hold, no timer: nothing more is sent.
    old.advance(10 * INTERVAL);
    expect(old.told).toHaveLength(2);
  });

  test("a later move to the same announcer waits for a new word", () => {
    const old = node("node-a");
    const answering = new Map([["192.0.2.1", every]]);
    const winners = new Map([["192.0.2.1", "node-b"]]);
    old.handovers.plan(new Map(), answering, winners);
    old.handovers.received({ type: "answering", from: "node-b", addresses: ["192.0.2.1"] });
    old.handovers.plan(new Map(), answering, winners);
    // The address came back here, and now moves to node-b again.
    old.handovers.plan(new Map([["192.0.2.1", every]]), answering, winners);
    const again = old.handovers.plan(new Map(), answering, winners);
    expect([...again.answer.keys()]).toEqual(["192.0.2.1"]);
    old.handovers.stop();
  });

  test("a hold nobody confirms ends after the hold time", () => {
    vi.useFakeTimers();
    const old = node("node-a");
    const answering = new Map([["192.0.2.1", every]]);
    const winners = new Map([["192.0.2.1", "node-b"]]);
    old.handovers.plan(new Map(), answering, winners);
    old.advance(MAX_HOLD - INTERVAL);
    expect(old.changes()).toBe(0);
    old.advance(INTERVAL);
    expect(old.changes()).toBe(1);
    const plan = old.handovers.plan(new Map(), answering, winners);
    expect(plan.released).toEqual([{ address: "192.0.2.1", reason: "expired", to: "node-b" }]);
  });
});

describe("Handovers as the new announcer", () => {
  test("answers at once for what it answers, and tells the asker once it answers the rest", async () => {
    const next = node("node-b");
    next.answering.add("192.0.2.1");
    next.handovers.received({ type: "handover", from: "node-a", addresses: ["192.0.2.1", "192.0.2.2"] });
    expect(next.told).toEqual([{ node: "node-a", type: "answering", addresses: ["192.0.2.1"] }]);

    next.answering.add("192.0.2.2");
    next.handovers.answered(["192.0.2.2", "192.0.2.3"]);
    // Not within the turn that started answering: its work comes first.
    expect(next.told).toHaveLength(1);
    await turn();
    expect(next.told.at(-1)).toEqual({ node: "node-a", type: "answering", addresses: ["192.0.2.2"] });
    // Told once: the question is forgotten once answered.
    next.handovers.answered(["192.0.2.2"]);
    await turn();
    expect(next.told).toHaveLength(2);
  });

  test("a question not repeated for a while is forgotten", () => {
    vi.useFakeTimers();
    const next = node("node-b");
    next.handovers.received({ type: "handover", from: "node-a", addresses: ["192.0.2.2"] });
    next.advance(10 * INTERVAL + 1);
    next.handovers.answered(["192.0.2.2"]);
    vi.runAllTimers();
    expect(next.told).toEqual([]);
  });

  test("knows the MACs of the speakers handing over to it, for a while", () => {
    vi.useFakeTimers();
    const next = node("node-b");
    expect(next.handovers.isHolderMac("02:00:00:00:00:0a")).toBe(false);
    next.handovers.received({
      type: "handover",
      from: "node-a",
      addresses: ["192.0.2.2"],
      macs: ["02:00:00:00:00:0a"],
    });
    expect(next.handovers.isHolderMac("02:00:00:00:00:0a")).toBe(true);
    next.advance(30_001);
    expect(next.handovers.isHolderMac("02:00:00:00:00:0a")).toBe(false);
  });

  test("several askers are each told", async () => {
    const next = node("node-b");
    next.handovers.received({ type: "handover", from: "node-a", addresses: ["192.0.2.2"] });
    next.handovers.received({ type: "handover", from: "node-c", addresses: ["192.0.2.2"] });
    next.handovers.answered(["192.0.2.2"]);
    await turn();
    expect(next.told).toEqual([
      { node: "node-a", type: "answering", addresses: ["192.0.2.2"] },
      { node: "node-c", type: "answering", addresses: ["192.0.2.2"] },
    ]);
  });
});
