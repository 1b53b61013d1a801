import { describe, expect, test } from "vitest";
import { chunks, knownListeners, LISTENERS_PER_CALL } from "./listenerBatch.ts";
import type { ObservedLoadBalancer } from "../model.ts";

const req = (n: number, tag = "") => ({
  tag,
  listenerArns: Array.from({ length: n }, (_, i) => `${tag}l${i}`),
});

describe("chunks", () => {
  test("requests share a call until it would name more than the limit", () => {
    const out = chunks([req(8, "a"), req(8, "b"), req(8, "c"), req(4, "d")]);
    expect(out.map((c) => c.map((r) => r.tag))).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
    for (const c of out)
      expect(c.reduce((n, r) => n + r.listenerArns.length, 0)).toBeLessThanOrEqual(LISTENERS_PER_CALL);
  });

  test("exactly the limit fits; nothing is lost or repeated", () => {
    const requests = [req(LISTENERS_PER_CALL, "a"), req(1, "b"), req(LISTENERS_PER_CALL - 1, "c")];
    const out = chunks(requests);
    expect(out.map((c) => c.map((r) => r.tag))).toEqual([["a"], ["b", "c"]]);
    expect(out.flat()).toEqual(requests);
    expect(chunks([])).toEqual([]);
  });
});

const lb = (arn: string, listeners: [string, string | undefined][]): ObservedLoadBalancer =>
  ({
    arn,
    listeners: listeners.map(([l, tg]) => ({ arn: l, ...(tg ? { targetGroupArn: tg } : {}) })),
  }) as unknown as ObservedLoadBalancer;

describe("knownListeners", () => {
  test("a load balancer's listeners are known when every target group attached to it is one they use", () => {
    const attached: Record<string, string[]> = { lb1: ["tg1", "tg2"], lb2: ["tg3", "foreign"] };
    const known = knownListeners(
      [
        lb("lb1", [
          ["l1", "tg1"],
          ["l2", "tg2"],
        ]),
        lb("lb2", [["l3", "tg3"]]),
        lb("lb3", [["l4", "tg4"]]),
      ],
      (arn) => attached[arn] ?? [],
    );
    expect(Object.fromEntries(known)).toEqual({
      lb1: ["l1", "l2"],
      // Not lb2: a target group attached to it that its listeners do not use means a listener was added there,
      // which no read by ARN shows. lb3, not in the listings yet (made since), has its listeners as observed.
      lb3: ["l4"],
    });
  });
});
