import { expect, test } from "vitest";
import { podsAwaitGates, upBySide, upInEveryRule } from "./ruleHealth.ts";
import type { LoadBalancerIntent } from "../../provider.ts";

const rule = (members: Record<string, string>) => new Map(Object.entries(members));

test("an address is healthy only when Up in every rule that sends to it", () => {
  expect(
    upInEveryRule([
      rule({ "10.0.0.1": "Up", "10.0.0.2": "Up", "10.0.0.3": "Down" }),
      rule({ "10.0.0.1": "Up", "10.0.0.2": "Down", "10.0.0.3": "Down" }),
    ]),
  ).toEqual(["10.0.0.1"]);
});

test("a rule without an answer, or missing an address, passes nobody it does not list Up", () => {
  expect(upInEveryRule([rule({ "10.0.0.1": "Up" }), undefined])).toEqual([]);
  expect(upInEveryRule([rule({ "10.0.0.1": "Up", "10.0.0.2": "Up" }), rule({ "10.0.0.1": "Up" })])).toEqual([
    "10.0.0.1",
  ]);
  expect(upInEveryRule([])).toEqual([]);
  expect(upInEveryRule([rule({ "10.0.0.1": "" })])).toEqual([]);
});

test("a dual-stack Service's sides are judged apart: each address by the rules of its own family", () => {
  const v4 = [rule({ "10.0.0.1": "Up", "10.0.0.2": "Down" }), rule({ "10.0.0.1": "Up", "10.0.0.2": "Up" })];
  const v6 = [rule({ "fd00::1": "Up", "fd00::2": "Up" })];
  expect(upBySide([v4, v6])).toEqual(["10.0.0.1", "fd00::1", "fd00::2"]);
  expect(upBySide([v4, [undefined]])).toEqual(["10.0.0.1"]);
  expect(upBySide([])).toEqual([]);
});

test("health is worth reading only while some pod waits for its gate", () => {
  const intent = (awaiting: boolean) =>
    ({
      endpoints: [
        { ip: "10.0.0.1", ports: {} },
        { ip: "10.0.0.2", ports: {}, ...(awaiting ? { awaitingGate: "web-2" } : {}) },
      ],
    }) as unknown as LoadBalancerIntent;
  expect(podsAwaitGates(intent(true))).toBe(true);
  expect(podsAwaitGates(intent(false))).toBe(false);
});
