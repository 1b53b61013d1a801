import { expect, test } from "vitest";
import { verdictOf } from "./migrate.ts";

test("a plan's verdict is its gravest line's: refuse, recreate, adopt, keep; other lines are changes", () => {
  expect(verdictOf(["refuse: LBC runs", "adopt NLB arn in place"])).toBe("refuse");
  expect(verdictOf(["recreate: scheme differs", "refused until ...", "create internet-facing NLB x"])).toBe(
    "recreate",
  );
  expect(verdictOf(["adopt NLB arn in place", "register i-1:30080 in tg"])).toBe("adopt");
  expect(verdictOf(["keep NLB arn (Portico's)", "register i-1:30080 in tg"])).toBe("keep");
  expect(verdictOf(["create internal NLB k8s-x"])).toBe("change");
  expect(verdictOf([])).toBe("keep");
  // A word that merely begins like a verdict is not one.
  expect(verdictOf(["adoption of nothing", "keeping"])).toBe("change");
});
