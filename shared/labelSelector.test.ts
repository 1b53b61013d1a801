import { describe, expect, it, test } from "vitest";
import {
  matchesLabelSelector,
  parseLabelSelector,
  parseLabelSelectorText,
  validateLabelSelector,
  type LabelSelector,
} from "./labelSelector.ts";

const labels = { app: "web", tier: "frontend", empty: "" };

describe("matchesLabelSelector", () => {
  it("matches everything with an empty selector", () => {
    expect(matchesLabelSelector({}, labels)).toBe(true);
    expect(matchesLabelSelector({}, {})).toBe(true);
  });

  it("requires every matchLabels entry", () => {
    expect(matchesLabelSelector({ matchLabels: { app: "web" } }, labels)).toBe(true);
    expect(matchesLabelSelector({ matchLabels: { app: "web", tier: "backend" } }, labels)).toBe(false);
    expect(matchesLabelSelector({ matchLabels: { missing: "" } }, labels)).toBe(false);
    expect(matchesLabelSelector({ matchLabels: { empty: "" } }, labels)).toBe(true);
  });

  const cases: [string, LabelSelector, boolean][] = [
    [
      "In with a listed value",
      { matchExpressions: [{ key: "app", operator: "In", values: ["db", "web"] }] },
      true,
    ],
    [
      "In with an unlisted value",
      { matchExpressions: [{ key: "app", operator: "In", values: ["db"] }] },
      false,
    ],
    [
      "In with the key missing",
      { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] },
      false,
    ],
    [
      "NotIn with an unlisted value",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["db"] }] },
      true,
    ],
    [
      "NotIn with a listed value",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
      false,
    ],
    [
      "NotIn with the key missing",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      true,
    ],
    ["Exists present", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists with an empty value", { matchExpressions: [{ key: "empty", operator: "Exists" }] }, true],
    ["Exists missing", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    ["DoesNotExist missing", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, true],
    ["DoesNotExist present", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, false],
    [
      "labels and expressions together (AND)",
      {
        matchLabels: { tier: "frontend" },
        matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }],
      },
      false,
    ],
  ];
  for (const [name, selector, expected] of cases) {
    it(`matches ${name}: ${expected}`, () => {
      expect(matchesLabelSelector(selector, labels)).toBe(expected);
    });
  }

  it("does not mistake inherited object properties for labels", () => {
    expect(matchesLabelSelector({ matchExpressions: [{ key: "toString", operator: "Exists" }] }, {})).toBe(
      false,
    );
  });
});

describe("validateLabelSelector", () => {
  it("accepts and copies well-formed selectors", () => {
    const raw = { matchLabels: { a: "b" }, matchExpressions: [{ key: "k", operator: "In", values: ["v"] }] };
    expect(validateLabelSelector(raw, "sel")).toEqual({ selector: raw, problems: [] });
    expect(validateLabelSelector({}, "sel")).toEqual({ selector: {}, problems: [] });
  });

  it("names each malformed field", () => {
    const problems = (raw: unknown) => validateLabelSelector(raw, "sel").problems;
    expect(problems("app=web")).toEqual(["sel must be an object with matchLabels and/or matchExpressions"]);
    expect(problems({ matchLabel: {} })).toEqual([
      "sel.matchLabel is not a selector field; use matchLabels or matchExpressions",
    ]);
    expect(problems({ matchLabels: { a: 1 } })).toEqual([
      "sel.matchLabels must map label keys to string values",
    ]);
    expect(problems({ matchExpressions: {} })).toEqual(["sel.matchExpressions must be a list"]);
    expect(problems({ matchExpressions: ["x"] })).toEqual([
      "sel.matchExpressions[0] must be an object with key, operator and values",
    ]);
    expect(problems({ matchExpressions: [{ key: "", operator: "Equals" }] })).toEqual([
      "sel.matchExpressions[0].key must be a non-empty label key",
      'sel.matchExpressions[0].operator must be one of In, NotIn, Exists, DoesNotExist (got "Equals")',
    ]);
    expect(problems({ matchExpressions: [{ key: "k", operator: "In" }] })).toEqual([
      "sel.matchExpressions[0].values must not be empty for operator In",
    ]);
    expect(problems({ matchExpressions: [{ key: "k", operator: "Exists", values: ["x"] }] })).toEqual([
      "sel.matchExpressions[0].values must be empty for operator Exists; remove them",
    ]);
    expect(problems({ matchExpressions: [{ key: "k", operator: "NotIn", values: [1] }] })).toContain(
      "sel.matchExpressions[0].values must be a list of strings",
    );
  });
});

describe("the text form", () => {
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

  test("reads into the same selector the API's matching uses", () => {
    expect(parseLabelSelectorText("a=b,c notin (d, e),!f")).toEqual({
      matchExpressions: [
        { key: "a", operator: "In", values: ["b"] },
        { key: "c", operator: "NotIn", values: ["d", "e"] },
        { key: "f", operator: "DoesNotExist" },
      ],
    });
  });
});
