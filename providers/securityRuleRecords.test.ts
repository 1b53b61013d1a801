import { describe, expect, it } from "vitest";
import { SAME_AGAIN_MS, SecurityRuleRecords, type RuleDifference } from "./securityRuleRecords.ts";

const web = { namespace: "shop", name: "web", uid: "u-web" };
const api = { namespace: "shop", name: "api", uid: "u-api" };
type Held = { rules: string[] };

/** A clock the test moves, and the records on it. */
function world() {
  const clock = { now: 1_000 };
  const records = new SecurityRuleRecords<Held>(() => clock.now);
  return { clock, records };
}

/** Rules held, compared with those found: each one missing is a difference (mendable unless it says "maybe"). */
const against =
  (found: string[]) =>
  (held: Held): RuleDifference[] =>
    held.rules
      .filter((r) => !found.includes(r))
      .map((r) => ({ text: `${r} is gone`, mendable: !r.startsWith("maybe") }));

describe("SecurityRuleRecords", () => {
  it("tells the Services whose rules a read found different, each with its differences", () => {
    const { clock, records } = world();
    records.held(web, { rules: ["tcp/80", "tcp/443"] });
    records.held(api, { rules: ["tcp/8080"] });
    clock.now += 10;
    expect(records.drifted(clock.now, against(["tcp/80", "tcp/8080"]))).toEqual([
      { service: web, differences: ["tcp/443 is gone"] },
    ]);
    expect(records.serviceOf("u-api")).toEqual(api);
    expect(records.size).toBe(2);
  });

  it("judges nothing of a Service whose rules are being written, or were written after the read began", () => {
    const { clock, records } = world();
    records.held(web, { rules: ["tcp/80"] });
    clock.now += 10;
    const done = records.writing("u-web");
    // Mid-write: whatever the read shows may be Portico's own write half done.
    expect(records.drifted(clock.now + 1, against([]))).toEqual([]);
    clock.now += 10;
    done();
    records.held(web, { rules: ["tcp/80"] });
    // A read begun before the write ended may not show it.
    expect(records.drifted(clock.now - 5, against([]))).toEqual([]);
    expect(records.drifted(clock.now, against([]))).toEqual([]);
    clock.now += 1;
    expect(records.drifted(clock.now, against([]))).toEqual([
      { service: web, differences: ["tcp/80 is gone"] },
    ]);
  });

  it("rules asked for differently count from when the pass ended, written or not", () => {
    const { clock, records } = world();
    records.held(web, { rules: ["tcp/80"] });
    clock.now += 10;
    const readAt = clock.now;
    clock.now += 10;
    records.held(web, { rules: ["tcp/81"] });
    expect(records.drifted(readAt, against([]))).toEqual([]);
    // The same rules again, nothing written: a read begun before that pass still judges them.
    clock.now += 10;
    const later = clock.now;
    clock.now += 10;
    records.held(web, { rules: ["tcp/81"] });
    expect(records.drifted(later, against([]))).toEqual([{ service: web, differences: ["tcp/81 is gone"] }]);
  });

  it("tells the same differences once, again after a pass wrote the rules when the pass surely mends them, and those it may not mend again only after a while", () => {
    const { clock, records } = world();
    records.held(web, { rules: ["tcp/80", "maybe/53"] });
    clock.now += 10;
    const gone = against([]);
    expect(records.drifted(clock.now, gone)).toHaveLength(1);
    clock.now += 10;
    // Queued to be reconciled: not told again meanwhile.
    expect(records.drifted(clock.now, gone)).toEqual([]);
    // The pass put back what it could (tcp/80) and could not put back maybe/53.
    records.writing("u-web")();
    records.held(web, { rules: ["tcp/80", "maybe/53"] });
    clock.now += 10;
    const onlyMaybe = against(["tcp/80"]);
    expect(records.drifted(clock.now, onlyMaybe)).toEqual([]);
    // tcp/80 revoked again: told at once (with what is still missing).
    clock.now += 10;
    expect(records.drifted(clock.now, gone)).toEqual([
      { service: web, differences: ["tcp/80 is gone", "maybe/53 is gone"] },
    ]);
    records.writing("u-web")();
    records.held(web, { rules: ["tcp/80", "maybe/53"] });
    clock.now += SAME_AGAIN_MS;
    expect(records.drifted(clock.now, onlyMaybe)).toEqual([
      { service: web, differences: ["maybe/53 is gone"] },
    ]);
    // Found in place, then gone again: told at once.
    clock.now += 10;
    expect(records.drifted(clock.now, against(["tcp/80", "maybe/53"]))).toEqual([]);
    clock.now += 10;
    expect(records.drifted(clock.now, onlyMaybe)).toEqual([
      { service: web, differences: ["maybe/53 is gone"] },
    ]);
  });

  it("forgets a Service whose pass failed or which was deleted, and everything at a new leadership term", () => {
    const { clock, records } = world();
    records.held(web, { rules: ["tcp/80"] });
    records.held(api, { rules: ["tcp/80"] });
    records.forget("u-web");
    clock.now += 10;
    expect(records.drifted(clock.now, against([])).map((d) => d.service)).toEqual([api]);
    records.clear();
    expect(records.size).toBe(0);
    expect(records.drifted(clock.now + 10, against([]))).toEqual([]);
  });
});
