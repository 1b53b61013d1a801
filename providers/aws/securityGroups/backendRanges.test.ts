import { describe, expect, test } from "vitest";
import {
  covers,
  describeRange,
  planRanges,
  wantedRanges,
  type BackendNeed,
  type ObservedRange,
} from "./backendRanges.ts";

const need = (groupId: string, protocol: "tcp" | "udp", port: number): BackendNeed => ({
  groupId,
  protocol,
  port,
});
const rule = (ruleId: string, groupId: string, protocol: "tcp" | "udp", from: number, to: number) =>
  ({ ruleId, groupId, protocol, from, to, source: "sg-shared" }) satisfies ObservedRange;
const show = (p: { authorize: { groupId: string }[]; revoke: ObservedRange[] }) => ({
  authorize: p.authorize.map((r) => describeRange(r as ObservedRange)),
  revoke: p.revoke.map((r) => r.ruleId),
});

describe("wanted ranges", () => {
  test("one range per backend group and protocol, from the lowest port any Service needs to the highest", () => {
    const web = [need("sg-nodes", "tcp", 30080), need("sg-nodes", "tcp", 32000)];
    const dns = [need("sg-nodes", "udp", 30053), need("sg-nodes", "tcp", 10256)];
    const pods = [need("sg-pods", "tcp", 8080)];
    expect(wantedRanges([web, dns, pods]).map(describeRange)).toEqual([
      "sg-nodes tcp 10256-32000",
      "sg-nodes udp 30053",
      "sg-pods tcp 8080",
    ]);
  });

  test("however many Services, the rule count stays one per group and protocol", () => {
    const services = Array.from({ length: 1000 }, (_, i) => [need("sg-nodes", "tcp", 30000 + i)]);
    expect(wantedRanges(services).map(describeRange)).toEqual(["sg-nodes tcp 30000-30999"]);
  });

  test("nothing wanted: no range", () => {
    expect(wantedRanges([[], []])).toEqual([]);
  });
});

describe("planning the shared rules", () => {
  const wanted = wantedRanges([[need("sg-nodes", "tcp", 30100), need("sg-nodes", "tcp", 30200)]]);

  test("a missing range is authorized", () => {
    expect(show(planRanges(wanted, [], true))).toEqual({
      authorize: ["sg-nodes tcp 30100-30200"],
      revoke: [],
    });
  });

  test("the exact range in place: nothing to do", () => {
    expect(show(planRanges(wanted, [rule("r1", "sg-nodes", "tcp", 30100, 30200)], true))).toEqual({
      authorize: [],
      revoke: [],
    });
  });

  test("a range that must grow is replaced, the new one authorized before the old is revoked", () => {
    const p = planRanges(wanted, [rule("r1", "sg-nodes", "tcp", 30150, 30200)], true);
    expect(show(p)).toEqual({ authorize: ["sg-nodes tcp 30100-30200"], revoke: ["r1"] });
  });

  test("once every Service is known a range narrows to what they need", () => {
    const p = planRanges(wanted, [rule("r1", "sg-nodes", "tcp", 30000, 32767)], true);
    expect(show(p)).toEqual({ authorize: ["sg-nodes tcp 30100-30200"], revoke: ["r1"] });
  });

  test("before every Service is known nothing narrows: a range grows to hold what is there and what is wanted", () => {
    const wide = [rule("r1", "sg-nodes", "tcp", 30000, 30150)];
    expect(show(planRanges(wanted, wide, false))).toEqual({
      authorize: ["sg-nodes tcp 30000-30200"],
      revoke: ["r1"],
    });
    expect(show(planRanges(wanted, [rule("r1", "sg-nodes", "tcp", 30000, 32767)], false))).toEqual({
      authorize: [],
      revoke: [],
    });
  });

  test("rules no Service needs are revoked only once every Service is known", () => {
    const stale = [rule("r1", "sg-nodes", "tcp", 30100, 30200), rule("r2", "sg-old", "udp", 30053, 30053)];
    expect(show(planRanges(wanted, stale, true))).toEqual({ authorize: [], revoke: ["r2"] });
    expect(show(planRanges(wanted, stale, false))).toEqual({ authorize: [], revoke: [] });
    expect(show(planRanges([], stale, true))).toEqual({ authorize: [], revoke: ["r1", "r2"] });
  });

  test("duplicates of one group and protocol collapse into one rule", () => {
    const twice = [rule("r1", "sg-nodes", "tcp", 30100, 30200), rule("r2", "sg-nodes", "tcp", 30120, 30130)];
    expect(show(planRanges(wanted, twice, true))).toEqual({ authorize: [], revoke: ["r2"] });
    expect(show(planRanges(wanted, twice, false))).toEqual({ authorize: [], revoke: ["r2"] });
  });
});

test("covers: a Service's needs are met when each port lies in a range of its group and protocol", () => {
  const rules = [rule("r1", "sg-nodes", "tcp", 30000, 30200)];
  expect(covers(rules, [need("sg-nodes", "tcp", 30000), need("sg-nodes", "tcp", 30200)])).toBe(true);
  expect(covers(rules, [need("sg-nodes", "tcp", 30201)])).toBe(false);
  expect(covers(rules, [need("sg-nodes", "udp", 30100)])).toBe(false);
  expect(covers(rules, [need("sg-pods", "tcp", 30100)])).toBe(false);
  expect(covers(rules, [])).toBe(true);
});
