import type { V1DaemonSet, V1Node, V1Pod } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { replacedInPlace } from "./replacement.ts";

const ds = (generation: string, extra: Partial<V1DaemonSet["metadata"]> = {}): V1DaemonSet => ({
  metadata: {
    name: "portico-speaker",
    uid: "ds-1",
    annotations: { "deprecated.daemonset.template.generation": generation },
    ...extra,
  },
});
const pod = (generation: string | undefined, owner = "ds-1"): V1Pod => ({
  metadata: {
    name: "portico-speaker-x",
    labels: generation === undefined ? {} : { "pod-template-generation": generation },
    ownerReferences: [
      { apiVersion: "apps/v1", kind: "DaemonSet", name: "portico-speaker", uid: owner, controller: true },
    ],
  },
});
const node = (spec: V1Node["spec"] = {}, metadata: V1Node["metadata"] = {}): V1Node => ({
  metadata: { name: "n1", ...metadata },
  spec,
});

describe("a speaker's pod replaced in place", () => {
  test("is one of an older template than its DaemonSet's, on a node that stays", () => {
    expect(replacedInPlace(pod("3"), ds("4"), node())).toBe(
      "DaemonSet portico-speaker rolls from template generation 3 to 4",
    );
  });

  test("anything else is a departure", () => {
    const cases: [string, V1Pod, V1DaemonSet | undefined, V1Node | undefined][] = [
      ["the current template (deleted by hand, evicted)", pod("4"), ds("4"), node()],
      ["the DaemonSet being deleted", pod("3"), ds("4", { deletionTimestamp: new Date() }), node()],
      ["no DaemonSet read", pod("3"), undefined, node()],
      ["another DaemonSet's pod", pod("3", "ds-2"), ds("4"), node()],
      ["no template label", pod(undefined), ds("4"), node()],
      ["its node cordoned", pod("3"), ds("4"), node({ unschedulable: true })],
      ["its node being deleted", pod("3"), ds("4"), node({}, { deletionTimestamp: new Date() })],
      [
        "its node tainted for removal",
        pod("3"),
        ds("4"),
        node({ taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }] }),
      ],
      ["its node unknown", pod("3"), ds("4"), undefined],
      [
        "the new template no longer placing a pod on its node",
        pod("3"),
        {
          ...ds("4"),
          spec: { selector: {}, template: { spec: { containers: [], nodeSelector: { role: "edge" } } } },
        },
        node(),
      ],
    ];
    for (const [why, p, d, n] of cases) expect(replacedInPlace(p, d, n), why).toBeUndefined();
  });
});
