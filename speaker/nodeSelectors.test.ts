import { describe, expect, test } from "vitest";
import { nodeMayAnnounce, type NodeSelector } from "./nodeSelectors.ts";

const edge = { "node-role.kubernetes.io/edge": "", zone: "a", rack: "r1" };
const core = { zone: "b", rack: "r2" };
const bare = {};

describe("a pool's nodeSelectors", () => {
  test("an empty list lets every node announce, labelled or not", () => {
    for (const labels of [edge, core, bare]) expect(nodeMayAnnounce([], labels)).toBe(true);
  });

  test("an empty selector in the list selects every node, as in Kubernetes", () => {
    for (const labels of [edge, core, bare]) expect(nodeMayAnnounce([{}], labels)).toBe(true);
  });

  // One selector at a time, against three nodes: [selector, edge, core, bare].
  const single: [string, NodeSelector, boolean, boolean, boolean][] = [
    ["matchLabels, equal value", { matchLabels: { zone: "a" } }, true, false, false],
    [
      "matchLabels, empty value is a value",
      { matchLabels: { "node-role.kubernetes.io/edge": "" } },
      true,
      false,
      false,
    ],
    ["matchLabels, every entry must hold", { matchLabels: { zone: "a", rack: "r2" } }, false, false, false],
    [
      "In, a listed value",
      { matchExpressions: [{ key: "zone", operator: "In", values: ["a", "c"] }] },
      true,
      false,
      false,
    ],
    [
      "In, both nodes' values",
      { matchExpressions: [{ key: "zone", operator: "In", values: ["a", "b"] }] },
      true,
      true,
      false,
    ],
    [
      "In, key missing never matches",
      { matchExpressions: [{ key: "gpu", operator: "In", values: ["yes"] }] },
      false,
      false,
      false,
    ],
    [
      "NotIn, listed value excluded",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      false,
      true,
      true,
    ],
    [
      "NotIn, key missing matches",
      { matchExpressions: [{ key: "gpu", operator: "NotIn", values: ["yes"] }] },
      true,
      true,
      true,
    ],
    [
      "Exists",
      { matchExpressions: [{ key: "node-role.kubernetes.io/edge", operator: "Exists" }] },
      true,
      false,
      false,
    ],
    [
      "Exists on a key every labelled node has",
      { matchExpressions: [{ key: "rack", operator: "Exists" }] },
      true,
      true,
      false,
    ],
    [
      "DoesNotExist",
      { matchExpressions: [{ key: "node-role.kubernetes.io/edge", operator: "DoesNotExist" }] },
      false,
      true,
      true,
    ],
    [
      "expressions are ANDed",
      {
        matchExpressions: [
          { key: "rack", operator: "Exists" },
          { key: "zone", operator: "NotIn", values: ["a"] },
        ],
      },
      false,
      true,
      false,
    ],
    [
      "matchLabels and matchExpressions are ANDed",
      { matchLabels: { zone: "a" }, matchExpressions: [{ key: "rack", operator: "In", values: ["r2"] }] },
      false,
      false,
      false,
    ],
    ["an unreadable entry selects nothing", null, false, false, false],
  ];
  test.each(single)("%s", (_, selector, onEdge, onCore, onBare) => {
    expect([edge, core, bare].map((labels) => nodeMayAnnounce([selector], labels))).toEqual([
      onEdge,
      onCore,
      onBare,
    ]);
  });

  test("several selectors are ORed: a node matching any one may announce", () => {
    const selectors: NodeSelector[] = [
      { matchLabels: { zone: "a" } },
      { matchExpressions: [{ key: "rack", operator: "In", values: ["r2"] }] },
    ];
    expect([edge, core, bare].map((labels) => nodeMayAnnounce(selectors, labels))).toEqual([
      true,
      true,
      false,
    ]);
  });

  test("an unreadable entry next to readable ones takes nothing away from them", () => {
    const selectors: NodeSelector[] = [null, { matchLabels: { zone: "b" } }];
    expect([edge, core, bare].map((labels) => nodeMayAnnounce(selectors, labels))).toEqual([
      false,
      true,
      false,
    ]);
  });

  test("a list of only unreadable entries selects nothing rather than everything", () => {
    expect([edge, core, bare].map((labels) => nodeMayAnnounce([null, null], labels))).toEqual([
      false,
      false,
      false,
    ]);
  });
});
