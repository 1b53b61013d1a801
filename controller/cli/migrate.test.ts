import { expect, test } from "vitest";
import { bindingLines, verdictOf } from "./migrate.ts";

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

test("the Service's TargetGroupBindings are named as LBC's to delete with it; others' are not", () => {
  const binding = (name: string, service: string) => ({
    metadata: { name, namespace: "shop" },
    spec: { serviceRef: { name: service }, targetGroupARN: `arn:tg/${name}` },
  });
  const lines = bindingLines([binding("k8s-shop-web-1", "web"), binding("k8s-shop-webs-2", "webs")], "web");
  expect(lines).toEqual([
    expect.stringMatching(/^keep TargetGroupBinding shop\/k8s-shop-web-1 as it is .*arn:tg\/k8s-shop-web-1/),
  ]);
  expect(verdictOf(["adopt NLB arn in place", ...lines])).toBe("adopt");
});
