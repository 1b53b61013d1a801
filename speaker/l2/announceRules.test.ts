import type { V1Node } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { readAdvertisements } from "./advertisements.ts";
import { AnnounceRules } from "./announceRules.ts";
import { readPools } from "../pools.ts";

const node = (name: string, labels: Record<string, string>): V1Node => ({ metadata: { name, labels } });
const nodes = [
  node("edge-1", { zone: "a", edge: "" }),
  node("core-1", { zone: "b" }),
  node("bare-1", {}),
  { metadata: {} },
];

const porticoPools = readPools(
  [
    { metadata: { name: "anywhere" }, spec: { addresses: ["192.0.2.0/28"] } },
    {
      metadata: { name: "edge" },
      spec: {
        addresses: ["192.0.2.16/28"],
        nodeSelectors: [{ matchExpressions: [{ key: "edge", operator: "Exists" }] }],
      },
    },
    {
      metadata: { name: "nowhere" },
      spec: { addresses: ["192.0.2.32/28"], nodeSelectors: [{ matchLabels: { zone: "z" } }] },
    },
  ],
  "portico.io",
).pools;
const metallbPools = readPools(
  [
    { metadata: { name: "lan", namespace: "metallb-system" }, spec: { addresses: ["192.0.2.48/28"] } },
    {
      metadata: { name: "dark", namespace: "metallb-system", labels: { dark: "" } },
      spec: { addresses: ["192.0.2.64/28"] },
    },
  ],
  "metallb.io",
).pools;
const metallbAds = readAdvertisements(
  [
    {
      metadata: { name: "zone-b", namespace: "metallb-system" },
      spec: {
        ipAddressPools: ["lan"],
        nodeSelectors: [{ matchLabels: { zone: "b" } }],
        interfaces: ["eth1"],
      },
    },
  ],
  "metallb.io",
).ads;

const names = (set: ReadonlySet<string> | undefined) => (set ? [...set].sort() : set);

describe("the nodes that may announce, per pool", () => {
  const rules = new AnnounceRules([...porticoPools, ...metallbPools], metallbAds, nodes);

  test("Portico pools without advertisements: their own nodeSelectors; none means every node (undefined)", () => {
    expect(names(rules.allowedNodes("anywhere", {}))).toBeUndefined();
    expect(names(rules.allowedNodes("edge", {}))).toEqual(["edge-1"]);
    expect(names(rules.allowedNodes("nowhere", {}))).toEqual([]);
    expect(rules.reason("nowhere", {})).toBe("noMatchingNode");
  });

  test("MetalLB pools: their advertisements' nodeSelectors, and nobody without an advertisement", () => {
    expect(names(rules.allowedNodes("metallb-system/lan", {}))).toEqual(["core-1"]);
    expect(rules.interfaces("metallb-system/lan", {}, "core-1")).toEqual(["eth1"]);
    expect(names(rules.allowedNodes("metallb-system/dark", {}))).toEqual([]);
    expect(rules.reason("metallb-system/dark", {})).toBe("noAdvertisement");
    expect(rules.unadvertised()).toEqual(["metallb-system/dark"]);
  });

  test("a pool the rules do not know (an address in no pool) may be announced by every node", () => {
    expect(rules.allowedNodes("gone", {})).toBeUndefined();
    expect(rules.interfaces("gone", {}, "core-1")).toBeUndefined();
  });

  test("a node without labels is matched as having none", () => {
    const pools = readPools([
      {
        metadata: { name: "p" },
        spec: {
          addresses: ["192.0.2.0/30"],
          nodeSelectors: [{ matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }],
        },
      },
    ]).pools;
    expect(
      names(new AnnounceRules(pools, [], [{ metadata: { name: "unlabelled" } }]).allowedNodes("p", {})),
    ).toEqual(["unlabelled"]);
  });
});
