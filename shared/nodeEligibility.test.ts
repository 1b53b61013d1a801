import type { V1Node } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { parseLabelSelector } from "./labelSelector.ts";
import {
  AUTOSCALER_DELETION_TAINT,
  CORDONED,
  eligibleNodes,
  EXCLUDE_LABEL,
  ineligibility,
  leaving,
} from "./nodeEligibility.ts";

interface Shape {
  ready?: boolean;
  cordoned?: boolean;
  deleted?: boolean;
  excluded?: boolean;
  autoscaled?: boolean;
  labels?: Record<string, string>;
}

function node(name: string, shape: Shape = {}): V1Node {
  return {
    metadata: {
      name,
      labels: { ...shape.labels, ...(shape.excluded ? { [EXCLUDE_LABEL]: "" } : {}) },
      ...(shape.deleted ? { deletionTimestamp: new Date(0) } : {}),
    },
    spec: {
      ...(shape.cordoned ? { unschedulable: true } : {}),
      ...(shape.autoscaled ? { taints: [{ key: AUTOSCALER_DELETION_TAINT, effect: "NoSchedule" }] } : {}),
    },
    status: { conditions: [{ type: "Ready", status: shape.ready === false ? "False" : "True" }] },
  };
}

const names = (nodes: V1Node[]) => nodes.map((n) => n.metadata!.name);

describe("leaving", () => {
  test.each([
    [{}, undefined],
    [{ deleted: true }, "being deleted"],
    [{ excluded: true }, `labelled ${EXCLUDE_LABEL}`],
    [{ autoscaled: true }, `tainted ${AUTOSCALER_DELETION_TAINT}`],
    [{ cordoned: true }, CORDONED],
    // Every sign at once: the strongest is named.
    [{ deleted: true, excluded: true, autoscaled: true, cordoned: true }, "being deleted"],
    [{ excluded: true, cordoned: true }, `labelled ${EXCLUDE_LABEL}`],
    // Readiness is not leaving: a NotReady node may come back.
    [{ ready: false }, undefined],
  ] satisfies [Shape, string | undefined][])("%o: %s", (shape, why) => {
    expect(leaving(node("n", shape))).toBe(why);
  });

  test("another taint, or an exclude label's value, does not matter", () => {
    const tainted = node("n");
    tainted.spec!.taints = [{ key: "dedicated", effect: "NoSchedule" }];
    expect(leaving(tainted)).toBeUndefined();
    expect(leaving(node("n", { labels: { [EXCLUDE_LABEL]: "false" } }))).toBe(`labelled ${EXCLUDE_LABEL}`);
  });
});

describe("ineligibility", () => {
  const edge = parseLabelSelector("role=edge");
  test("cordoning is named last: a cordoned node that is also NotReady or unselected is left out for that", () => {
    expect(ineligibility(node("n", { cordoned: true, ready: false }))).toBe("not Ready");
    expect(ineligibility(node("n", { cordoned: true }), [edge])).toBe(
      "not matched by the target-node selector",
    );
    expect(ineligibility(node("n", { cordoned: true, labels: { role: "edge" } }), [edge])).toBe(CORDONED);
    expect(ineligibility(node("n", { deleted: true, ready: false }))).toBe("being deleted");
  });

  test("a Ready node matching every selector qualifies; one selector missing is enough to leave it out", () => {
    const zone = parseLabelSelector("zone in (a,b)");
    expect(ineligibility(node("n", { labels: { role: "edge", zone: "a" } }), [edge, zone])).toBeUndefined();
    expect(ineligibility(node("n", { labels: { role: "edge", zone: "c" } }), [edge, zone])).toBe(
      "not matched by the target-node selector",
    );
    const noConditions: V1Node = { metadata: { name: "n" } };
    expect(ineligibility(noConditions)).toBe("not Ready");
  });
});

describe("eligibleNodes", () => {
  test("cordoned, deleted, excluded, autoscaled and NotReady nodes leave while others remain", () => {
    const nodes = [
      node("a"),
      node("b", { cordoned: true }),
      node("c", { deleted: true }),
      node("d", { excluded: true }),
      node("e", { autoscaled: true }),
      node("f", { ready: false }),
      node("g"),
    ];
    expect(names(eligibleNodes(nodes))).toEqual(["a", "g"]);
  });

  test("when every node that would qualify is cordoned, the cordoned ones keep the traffic", () => {
    const nodes = [
      node("a", { cordoned: true }),
      node("b", { cordoned: true }),
      node("c", { cordoned: true, ready: false }),
      node("d", { excluded: true }),
      node("e", { deleted: true, cordoned: true }),
    ];
    expect(names(eligibleNodes(nodes))).toEqual(["a", "b"]);
  });

  test("the guard is judged within the selectors: the last selected node keeps traffic while cordoned", () => {
    const edge = parseLabelSelector("role=edge");
    const nodes = [node("edge-1", { cordoned: true, labels: { role: "edge" } }), node("other")];
    expect(names(eligibleNodes(nodes, [edge]))).toEqual(["edge-1"]);
    expect(names(eligibleNodes(nodes))).toEqual(["other"]);
  });

  test("for Local, cordoned nodes stay beside the others: their own pods are all their traffic reaches", () => {
    const nodes = [
      node("a"),
      node("b", { cordoned: true }),
      node("c", { cordoned: true, ready: false }),
      node("d", { autoscaled: true }),
    ];
    expect(names(eligibleNodes(nodes, [], "Local"))).toEqual(["a", "b"]);
    expect(names(eligibleNodes(nodes, [], "Cluster"))).toEqual(["a"]);
    const edge = parseLabelSelector("role=edge");
    expect(names(eligibleNodes([node("e", { cordoned: true })], [edge], "Local"))).toEqual([]);
  });

  test("no node that could qualify at all: none", () => {
    expect(eligibleNodes([])).toEqual([]);
    expect(
      eligibleNodes([node("a", { ready: false }), node("b", { excluded: true, cordoned: true })]),
    ).toEqual([]);
  });
});
