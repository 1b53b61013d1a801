import { describe, expect, it } from "vitest";
import type { LoadBalancerConfiguration } from "./lbConfigurations.ts";
import {
  AGENT_POOL_LABEL,
  assignNodes,
  isPrimaryFor,
  nodesOf,
  unplacedNodes,
  vmSetOf,
  type PlacedNode,
} from "./nodePlacement.ts";

const RG = "/subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute";
const inScaleSet = (name: string, vmss: string, labels?: Record<string, string>): PlacedNode => ({
  name,
  internalIP: "10.0.1.10",
  providerID: `azure://${RG}/virtualMachineScaleSets/${vmss}/virtualMachines/0`,
  ...(labels ? { labels } : {}),
});
const standalone = (name: string, labels?: Record<string, string>): PlacedNode => ({
  name,
  providerID: `azure://${RG}/virtualMachines/${name}`,
  ...(labels ? { labels } : {}),
});

const K: LoadBalancerConfiguration = { name: "kubernetes", primaryVMSet: "pool-a" };
const B: LoadBalancerConfiguration = {
  name: "lb-b",
  primaryVMSet: "pool-b",
  nodeSelector: { matchLabels: { edge: "true" } },
};
const C: LoadBalancerConfiguration = { name: "lb-c", primaryAgentPoolName: "gpu" };

describe("vmSetOf and isPrimaryFor", () => {
  it("reads the scale set from a scale set VM's providerID, and none from a standalone VM's", () => {
    expect(vmSetOf(inScaleSet("n", "pool-a"))).toBe("pool-a");
    expect(vmSetOf(standalone("n"))).toBeUndefined();
    expect(vmSetOf({ name: "n" })).toBeUndefined();
  });

  it("primaryVMSet matches the scale set, whatever its case", () => {
    expect(isPrimaryFor(K, inScaleSet("n", "POOL-A"))).toBe(true);
    expect(isPrimaryFor(K, inScaleSet("n", "pool-ab"))).toBe(false);
  });

  it("primaryAgentPoolName matches AKS's agent pool label when the node carries labels", () => {
    expect(isPrimaryFor(C, standalone("n", { [AGENT_POOL_LABEL]: "gpu" }))).toBe(true);
    expect(isPrimaryFor(C, inScaleSet("n", "aks-gpu-123-vmss", { [AGENT_POOL_LABEL]: "cpu" }))).toBe(false);
  });

  it("primaryAgentPoolName matches AKS's scale set name aks-<pool>-<digits>-vmss without labels", () => {
    expect(isPrimaryFor(C, inScaleSet("n", "aks-gpu-12345678-vmss"))).toBe(true);
    expect(isPrimaryFor(C, inScaleSet("n", "aks-gpu2-12345678-vmss"))).toBe(false);
    expect(isPrimaryFor(C, standalone("n"))).toBe(false);
  });
});

describe("assignNodes", () => {
  it("a node of a primary pool goes to that load balancer only, even when another's nodeSelector matches it", () => {
    const nodes = [inScaleSet("a0", "pool-a", { edge: "true" }), inScaleSet("b0", "pool-b")];
    expect(Object.fromEntries(assignNodes([K, B], nodes))).toEqual({ a0: "kubernetes", b0: "lb-b" });
  });

  it("a node in no primary pool goes to a load balancer whose nodeSelector matches it", () => {
    const nodes = [standalone("x", { edge: "true" })];
    expect(Object.fromEntries(assignNodes([K, B, C], nodes))).toEqual({ x: "lb-b" });
  });

  it("a node matching no nodeSelector goes to one of those without a nodeSelector", () => {
    const nodes = Array.from({ length: 40 }, (_, i) => standalone(`n${i}`));
    const placed = assignNodes([K, B, C], nodes);
    expect(new Set(placed.values())).toEqual(new Set(["kubernetes", "lb-c"]));
    expect(placed.size).toBe(40);
  });

  it("spreads such nodes over the candidates, roughly evenly", () => {
    const nodes = Array.from({ length: 200 }, (_, i) => standalone(`node-${i}`));
    const counts = new Map<string, number>();
    for (const lb of assignNodes([K, C], nodes).values()) counts.set(lb, (counts.get(lb) ?? 0) + 1);
    expect(counts.get("kubernetes")).toBeGreaterThan(60);
    expect(counts.get("lb-c")).toBeGreaterThan(60);
  });

  it("the same node goes to the same load balancer whatever the other nodes and their order", () => {
    const nodes = Array.from({ length: 30 }, (_, i) => standalone(`n${i}`));
    const all = assignNodes([K, C], nodes);
    const reversed = assignNodes([K, C], [...nodes].reverse());
    const alone = new Map(nodes.map((n) => [n.name, assignNodes([K, C], [n]).get(n.name)]));
    expect(reversed).toEqual(all);
    expect(alone).toEqual(all);
  });

  it("a configuration added moves only the nodes it takes", () => {
    const nodes = Array.from({ length: 60 }, (_, i) => standalone(`n${i}`));
    const before = assignNodes([K, C], nodes);
    const D: LoadBalancerConfiguration = { name: "lb-d", primaryVMSet: "pool-d" };
    const after = assignNodes([K, C, D], nodes);
    for (const n of nodes)
      if (after.get(n.name) !== "lb-d") expect(after.get(n.name)).toBe(before.get(n.name));
    expect([...after.values()]).toContain("lb-d");
  });

  it("a node no load balancer can take (every one has a nodeSelector it fails) is left out", () => {
    expect(assignNodes([B], [standalone("x")]).size).toBe(0);
  });

  it("an empty nodeSelector is no nodeSelector, as upstream reads it", () => {
    const open: LoadBalancerConfiguration = { ...B, nodeSelector: {} };
    expect(Object.fromEntries(assignNodes([open], [standalone("x")]))).toEqual({ x: "lb-b" });
  });
});

describe("nodesOf", () => {
  it("the nodes of one configuration, in the order given, whatever the case of its name", () => {
    const nodes = [inScaleSet("a0", "pool-a"), inScaleSet("b0", "pool-b"), inScaleSet("a1", "pool-a")];
    expect(nodesOf([K, B], nodes, "KUBERNETES").map((n) => n.name)).toEqual(["a0", "a1"]);
    expect(nodesOf([K, B], nodes, "lb-b").map((n) => n.name)).toEqual(["b0"]);
  });
});

describe("unplacedNodes", () => {
  it("names the nodes no configuration takes, and none without configurations", () => {
    const nodes = [standalone("x"), standalone("y", { edge: "true" }), inScaleSet("a0", "pool-a")];
    expect(unplacedNodes([B], nodes)).toEqual(["x", "a0"]);
    expect(unplacedNodes([K, B], nodes)).toEqual([]);
    expect(unplacedNodes([], nodes)).toEqual([]);
  });
});
