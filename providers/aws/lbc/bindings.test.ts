import { expect, test } from "vitest";
import { bindingLines } from "./bindings.ts";

test("the Service's TargetGroupBindings are named as LBC's to delete with it; others' are not", () => {
  const binding = (name: string, service: string) => ({
    metadata: { name, namespace: "shop" },
    spec: { serviceRef: { name: service }, targetGroupARN: `arn:tg/${name}` },
  });
  const lines = bindingLines([binding("k8s-shop-web-1", "web"), binding("k8s-shop-webs-2", "webs")], "web");
  expect(lines).toEqual([
    expect.stringMatching(/^keep TargetGroupBinding shop\/k8s-shop-web-1 as it is .*arn:tg\/k8s-shop-web-1/),
  ]);
});
