import { describe, expect, test } from "vitest";
import { nextExpiry, planHandover, type HandoverInput, type Hold, type Interfaces } from "./handover.ts";

const SELF = "node-a";
const MAX = 2000;
const NOW = 10_000;
const A = "192.0.2.1";

function input(overrides: Partial<HandoverInput>): HandoverInput {
  return {
    self: SELF,
    now: NOW,
    maxHoldMs: MAX,
    won: new Map(),
    answering: new Map(),
    winners: new Map(),
    held: new Map(),
    confirmed: () => false,
    ...overrides,
  };
}

describe("planHandover, every case of one address", () => {
  // Each dimension of the decision, every combination of them.
  const wonCases = [false, true];
  const answeringCases = [false, true];
  const winnerCases = [undefined, SELF, "node-b", "node-c"] as const;
  const confirmedBy = [undefined, "node-b", "node-c"] as const;
  const previous = [
    undefined,
    { to: "node-b", since: NOW },
    { to: "node-b", since: NOW - MAX + 1 },
    { to: "node-b", since: NOW - MAX },
    { to: "node-c", since: NOW - 500 },
  ] as const;

  /** The rule, written as a table: what happens to the address. */
  function expected(
    won: boolean,
    answering: boolean,
    winner: string | undefined,
    confirmer: string | undefined,
    hold: Hold | undefined,
  ): { answered: boolean; hold?: Hold; released?: string } {
    if (won) return { answered: true };
    if (!answering) return { answered: false };
    if (winner === undefined) return { answered: false, released: "unannounced" };
    if (winner === SELF) return { answered: false, released: "withheld" };
    if (confirmer === winner) return { answered: false, released: "confirmed" };
    const since = hold?.since ?? NOW;
    if (NOW - since >= MAX) return { answered: false, released: "expired" };
    return { answered: true, hold: { to: winner, since } };
  }

  for (const won of wonCases)
    for (const answering of answeringCases)
      for (const winner of winnerCases)
        for (const confirmer of confirmedBy)
          for (const hold of previous) {
            const name = `won=${won} answering=${answering} winner=${winner} confirmedBy=${confirmer} held=${JSON.stringify(hold)}`;
            test(name, () => {
              const plan = planHandover(
                input({
                  won: new Map(won ? [[A, ["eth1"]]] : []),
                  answering: new Map(answering ? [[A, ["eth0"]]] : []),
                  winners: new Map(winner === undefined ? [] : [[A, winner]]),
                  held: new Map(hold ? [[A, hold]] : []),
                  confirmed: (address, node) => address === A && node === confirmer,
                }),
              );
              const want = expected(won, answering, winner, confirmer, hold);
              expect(plan.answer.has(A)).toBe(want.answered);
              // Won: the new election's interfaces; held: the ones it was answered on.
              if (want.answered) expect(plan.answer.get(A)).toEqual(won ? ["eth1"] : ["eth0"]);
              expect(plan.held.get(A)).toEqual(want.hold);
              expect(plan.waitingFor.get(want.hold?.to ?? "")).toEqual(want.hold ? [A] : undefined);
              expect(plan.released).toEqual(
                want.released
                  ? [
                      {
                        address: A,
                        reason: want.released,
                        ...(["confirmed", "expired"].includes(want.released) ? { to: winner } : {}),
                      },
                    ]
                  : [],
              );
            });
          }
});

describe("planHandover, many addresses", () => {
  test("answers everything won, holds what moves away, groups the holds by announcer, sorted", () => {
    const every: Interfaces = undefined;
    const plan = planHandover(
      input({
        won: new Map([["10.0.0.9", every]]),
        answering: new Map<string, Interfaces>([
          ["10.0.0.3", ["eth0"]],
          ["10.0.0.1", every],
          ["10.0.0.2", every],
          ["10.0.0.9", ["eth0"]],
        ]),
        winners: new Map([
          ["10.0.0.1", "node-c"],
          ["10.0.0.2", "node-b"],
          ["10.0.0.3", "node-c"],
          ["10.0.0.9", SELF],
        ]),
      }),
    );
    expect([...plan.answer]).toEqual([
      ["10.0.0.9", undefined],
      ["10.0.0.1", undefined],
      ["10.0.0.2", undefined],
      ["10.0.0.3", ["eth0"]],
    ]);
    expect(Object.fromEntries(plan.waitingFor)).toEqual({
      "node-b": ["10.0.0.2"],
      "node-c": ["10.0.0.1", "10.0.0.3"],
    });
    expect(plan.released).toEqual([]);
  });

  test("a confirmation releases only the confirmed address; the others wait on", () => {
    const held = new Map<string, Hold>([
      ["10.0.0.1", { to: "node-b", since: NOW - 100 }],
      ["10.0.0.2", { to: "node-b", since: NOW - 100 }],
    ]);
    const plan = planHandover(
      input({
        answering: new Map([
          ["10.0.0.1", undefined],
          ["10.0.0.2", undefined],
        ]),
        winners: new Map([
          ["10.0.0.1", "node-b"],
          ["10.0.0.2", "node-b"],
        ]),
        held,
        confirmed: (address, node) => address === "10.0.0.2" && node === "node-b",
      }),
    );
    expect([...plan.answer.keys()]).toEqual(["10.0.0.1"]);
    expect(plan.held.get("10.0.0.1")).toEqual({ to: "node-b", since: NOW - 100 });
    expect(plan.released).toEqual([{ address: "10.0.0.2", reason: "confirmed", to: "node-b" }]);
  });

  test("a hold waits for the announcer elected now, from when the hold began", () => {
    const plan = planHandover(
      input({
        answering: new Map([[A, undefined]]),
        winners: new Map([[A, "node-c"]]),
        held: new Map([[A, { to: "node-b", since: NOW - 700 }]]),
        // node-b's word no longer counts: node-c is to answer now.
        confirmed: (_, node) => node === "node-b",
      }),
    );
    expect(plan.held.get(A)).toEqual({ to: "node-c", since: NOW - 700 });
    expect(plan.released).toEqual([]);
  });

  test("the same input gives the same plan (pure)", () => {
    const i = input({
      answering: new Map([[A, undefined]]),
      winners: new Map([[A, "node-b"]]),
    });
    expect(planHandover(i)).toEqual(planHandover(i));
  });

  test("nothing answered, nothing won: an empty plan", () => {
    const plan = planHandover(input({ winners: new Map([[A, "node-b"]]) }));
    expect(plan).toEqual({ answer: new Map(), held: new Map(), waitingFor: new Map(), released: [] });
  });
});

describe("nextExpiry", () => {
  test("the earliest hold's end, or undefined without holds", () => {
    expect(nextExpiry(new Map(), MAX)).toBeUndefined();
    expect(
      nextExpiry(
        new Map([
          ["a", { to: "x", since: 500 }],
          ["b", { to: "y", since: 200 }],
        ]),
        MAX,
      ),
    ).toBe(200 + MAX);
  });
});
