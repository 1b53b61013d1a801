import { expect, test } from "vitest";
import { parseLabelSelector } from "./labels.ts";

test.each([
  ["", {}, true],
  ["a=b", { a: "b" }, true],
  ["a==b", { a: "b" }, true],
  ["a=b", { a: "c" }, false],
  ["a!=b", { a: "c" }, true],
  ["a!=b", {}, true],
  ["a in (x, y)", { a: "y" }, true],
  ["a in (x,y)", { a: "z" }, false],
  ["a notin (x,y)", { a: "z" }, true],
  ["a notin (x,y)", {}, true],
  ["a", { a: "" }, true],
  ["!a", { a: "" }, false],
  ["!a", {}, true],
  ["node-role.kubernetes.io/edge", { "node-role.kubernetes.io/edge": "" }, true],
  ["a=b,c in (d),!e", { a: "b", c: "d" }, true],
  ["a=b,c in (d),!e", { a: "b", c: "d", e: "1" }, false],
])("%s matches %o: %s", (selector, labels, expected) => {
  expect(parseLabelSelector(selector)(labels)).toBe(expected);
});

test.each(["a in (b", "=b", "a b", "a=b=c"])("%s is refused with the requirement named", (selector) => {
  expect(() => parseLabelSelector(selector)).toThrow(/invalid label selector requirement/);
});
