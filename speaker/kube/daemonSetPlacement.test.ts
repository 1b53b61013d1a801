import type { V1DaemonSet, V1Node, V1PodSpec } from "@kubernetes/client-node";
import { expect, test } from "vitest";
import { templatePlacesOn } from "./daemonSetPlacement.ts";

const node: V1Node = { metadata: { name: "node-a", labels: { role: "edge", rack: "7" } } };
const ds = (spec: Partial<V1PodSpec>): V1DaemonSet => ({
  spec: { selector: {}, template: { spec: { containers: [], ...spec } } },
});
const affinity = (...terms: object[]): Partial<V1PodSpec> => ({
  affinity: {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
  },
});

test("no constraint places the pod everywhere; a nodeSelector must match every label it names", () => {
  expect(templatePlacesOn(ds({}), node)).toBe(true);
  expect(templatePlacesOn(ds({ nodeSelector: { role: "edge" } }), node)).toBe(true);
  expect(templatePlacesOn(ds({ nodeSelector: { role: "edge", zone: "b" } }), node)).toBe(false);
  expect(templatePlacesOn(ds({ nodeSelector: { role: "core" } }), node)).toBe(false);
});

test("required node affinity: terms ORed, requirements ANDed, every operator, and matchFields on the name", () => {
  const expr = (key: string, operator: string, values?: string[]) => ({
    matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
  });
  expect(templatePlacesOn(ds(affinity(expr("role", "In", ["edge", "x"]))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(expr("role", "In", ["core"]))), node)).toBe(false);
  expect(templatePlacesOn(ds(affinity(expr("role", "NotIn", ["core"]))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(expr("zone", "NotIn", ["a"]))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(expr("rack", "Exists"))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(expr("rack", "DoesNotExist"))), node)).toBe(false);
  expect(templatePlacesOn(ds(affinity(expr("rack", "Gt", ["6"]))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(expr("rack", "Lt", ["6"]))), node)).toBe(false);
  expect(templatePlacesOn(ds(affinity(expr("role", "Gt", ["6"]))), node)).toBe(false);
  // OR of terms.
  expect(templatePlacesOn(ds(affinity(expr("role", "In", ["core"]), expr("rack", "In", ["7"]))), node)).toBe(
    true,
  );
  // AND within a term.
  expect(
    templatePlacesOn(
      ds(
        affinity({
          matchExpressions: [
            { key: "role", operator: "In", values: ["edge"] },
            { key: "rack", operator: "In", values: ["8"] },
          ],
        }),
      ),
      node,
    ),
  ).toBe(false);
  const byName = (name: string) => ({
    matchFields: [{ key: "metadata.name", operator: "In", values: [name] }],
  });
  expect(templatePlacesOn(ds(affinity(byName("node-a"))), node)).toBe(true);
  expect(templatePlacesOn(ds(affinity(byName("node-b"))), node)).toBe(false);
  // An empty term matches nothing.
  expect(templatePlacesOn(ds(affinity({})), node)).toBe(false);
});
