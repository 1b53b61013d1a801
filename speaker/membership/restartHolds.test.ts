import { describe, expect, test } from "vitest";
import type { Fact } from "./messages.ts";
import { RESTART_HOLD_MS, RestartHolds } from "./restartHolds.ts";

const fact = (status: Fact["status"], incarnation = 1): Fact => ({ node: "b", incarnation, status });

describe("restart holds", () => {
  test("a restarting node is taken for departed once its hold is over, not before", () => {
    const holds = new RestartHolds();
    holds.noted(fact("restarting"), 1000);
    const current = () => fact("restarting");
    expect(holds.expired(1000 + RESTART_HOLD_MS - 1, current)).toEqual([]);
    expect(holds.expired(1000 + RESTART_HOLD_MS, current)).toEqual([fact("left")]);
    // Said once.
    expect(holds.expired(1000 + 2 * RESTART_HOLD_MS, current)).toEqual([]);
  });

  test("a hold ends quietly when the new speaker joins (a later incarnation) or the node leaves", () => {
    for (const now of [fact("alive", 2), fact("left"), undefined]) {
      const holds = new RestartHolds();
      holds.noted(fact("restarting"), 0);
      expect(holds.expired(1, () => now)).toEqual([]);
      expect(holds.expired(RESTART_HOLD_MS, () => fact("restarting"))).toEqual([]);
    }
  });

  test("only a restart starts a hold", () => {
    const holds = new RestartHolds();
    for (const status of ["alive", "dead", "left"] as const) holds.noted(fact(status), 0);
    expect(holds.expired(RESTART_HOLD_MS, () => fact("restarting"))).toEqual([]);
  });
});
