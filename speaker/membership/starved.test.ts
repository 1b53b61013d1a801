import { expect, test } from "vitest";
import { starved } from "./silence.ts";

test("a probe round more than two intervals after the last one is a starved round", () => {
  expect(starved(undefined, 1000, 100)).toBe(false);
  expect(starved(1000, 1100, 100)).toBe(false);
  expect(starved(1000, 1200, 100)).toBe(false);
  expect(starved(1000, 1201, 100)).toBe(true);
  expect(starved(1000, 1700, 100)).toBe(true);
});
