import { describe, expect, test } from "vitest";
import { nextPoolStatus, seesAllOf, type PoolStatus } from "./poolStatus.ts";

const EARLIER = "2026-01-01T00:00:00.000Z";
const NOW = "2026-02-02T12:00:00.000Z";

const desired: PoolStatus = {
  assignedIPv4: "2",
  assignedIPv6: "0",
  availableIPv4: "6",
  availableIPv6: "0",
  conditions: [
    { type: "Valid", status: "True", reason: "Valid", message: "the allocator uses this pool" },
    { type: "Overlaps", status: "False", reason: "None", message: "none" },
  ],
};

/** The status as the apiserver holds it after an earlier write of `status`. */
function written(status: PoolStatus, at = EARLIER): PoolStatus {
  return { ...status, conditions: status.conditions.map((c) => ({ ...c, lastTransitionTime: at })) };
}

describe("the pool status to write", () => {
  test("a pool without status gets everything, every condition transitioning now", () => {
    expect(nextPoolStatus(desired, undefined, NOW)).toEqual(written(desired, NOW));
    expect(nextPoolStatus(desired, {}, NOW)).toEqual(written(desired, NOW));
  });

  test("nothing when the pool already says the same, whenever its conditions last changed", () => {
    expect(nextPoolStatus(desired, written(desired), NOW)).toBeUndefined();
  });

  test("a changed count is written, and the unchanged conditions keep their transition times", () => {
    const next = nextPoolStatus({ ...desired, assignedIPv4: "3", availableIPv4: "5" }, written(desired), NOW);
    expect(next).toMatchObject({ assignedIPv4: "3", availableIPv4: "5" });
    expect(next?.conditions.map((c) => c.lastTransitionTime)).toEqual([EARLIER, EARLIER]);
  });

  test("a condition changing status transitions now; the others keep their times", () => {
    const invalid: PoolStatus = {
      ...desired,
      conditions: [
        { type: "Valid", status: "False", reason: "InvalidSpec", message: "spec.addresses[0]: bad" },
        desired.conditions[1]!,
      ],
    };
    const next = nextPoolStatus(invalid, written(desired), NOW);
    expect(next?.conditions).toEqual([
      { ...invalid.conditions[0], lastTransitionTime: NOW },
      { ...invalid.conditions[1], lastTransitionTime: EARLIER },
    ]);
  });

  test("a new message or reason under the same status is written without a transition", () => {
    const reworded: PoolStatus = {
      ...desired,
      conditions: [
        desired.conditions[0]!,
        { type: "Overlaps", status: "False", reason: "None", message: "no overlap" },
      ],
    };
    const next = nextPoolStatus(reworded, written(desired), NOW);
    expect(next?.conditions[1]).toEqual({ ...reworded.conditions[1], lastTransitionTime: EARLIER });
  });

  test("a condition the pool does not have yet transitions now", () => {
    const withNodes: PoolStatus = {
      ...desired,
      conditions: [
        ...desired.conditions,
        { type: "ContainsNodeAddresses", status: "False", reason: "None", message: "none" },
      ],
    };
    expect(
      nextPoolStatus(withNodes, written(desired), NOW)?.conditions.map((c) => c.lastTransitionTime),
    ).toEqual([EARLIER, EARLIER, NOW]);
  });

  test("a condition no longer reported, or a status that is not ours, is rewritten", () => {
    const extra = {
      ...written(desired),
      conditions: [...written(desired).conditions, { type: "Old", status: "True" }],
    };
    expect(nextPoolStatus(desired, extra, NOW)?.conditions).toHaveLength(2);
    expect(nextPoolStatus(desired, { ...written(desired), assignedIPv4: 2 }, NOW)).toBeDefined();
    expect(nextPoolStatus(desired, { ...written(desired), conditions: "broken" }, NOW)).toEqual(
      written(desired, NOW),
    );
  });
});

describe("which pools a controller confined to one namespace writes", () => {
  const pool = (serviceAllocation?: object) => ({ spec: { addresses: ["192.0.2.0/30"], serviceAllocation } });

  test("every pool when it serves all namespaces", () => {
    expect(seesAllOf(pool(), undefined)).toBe(true);
    expect(seesAllOf(pool({ namespaces: ["other"] }), undefined)).toBe(true);
  });

  test("only the pools that serve its namespace alone", () => {
    expect(seesAllOf(pool({ namespaces: ["shop"] }), "shop")).toBe(true);
    expect(seesAllOf(pool(), "shop")).toBe(false);
    expect(seesAllOf(pool({ namespaces: ["shop", "other"] }), "shop")).toBe(false);
    expect(seesAllOf(pool({ namespaces: ["other"] }), "shop")).toBe(false);
    expect(seesAllOf(pool({ namespaces: [] }), "shop")).toBe(false);
    expect(
      seesAllOf(pool({ namespaces: ["shop"], namespaceSelectors: [{ matchLabels: { a: "b" } }] }), "shop"),
    ).toBe(false);
  });
});
