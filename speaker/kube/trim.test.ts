import type { V1Node } from "@kubernetes/client-node";
import { expect, test } from "vitest";
import { ineligibility } from "../../shared/nodeEligibility.ts";
import { trimNode } from "./trim.ts";

function fullNode(): V1Node {
  return {
    metadata: {
      name: "n1",
      labels: { role: "edge" },
      annotations: { "node.alpha.kubernetes.io/ttl": "0" },
      managedFields: [{ manager: "kubelet", operation: "Update" }],
    },
    spec: { providerID: "kind://n1", podCIDR: "10.244.1.0/24", taints: [] },
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "KubeletReady", message: "ok" },
        { type: "MemoryPressure", status: "False" },
      ],
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
      images: [{ names: ["registry.example/app:1"], sizeBytes: 123 }],
      capacity: { cpu: "4" },
    },
  };
}

test("a Node keeps what decides whether it may announce, and loses its images, capacities and annotations", () => {
  const node = fullNode();
  trimNode(node);
  expect(node).toEqual({
    metadata: { name: "n1", labels: { role: "edge" } },
    spec: { taints: [] },
    status: {
      conditions: [
        { type: "Ready", status: "True" },
        { type: "MemoryPressure", status: "False" },
      ],
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }],
    },
  });
});

test.each<[string, (n: V1Node) => void]>([
  ["not Ready", (n) => (n.status!.conditions![0]!.status = "False")],
  ["cordoned", (n) => (n.spec!.unschedulable = true)],
  [
    "tainted for removal",
    (n) => n.spec!.taints!.push({ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }),
  ],
  ["excluded", (n) => (n.metadata!.labels!["node.kubernetes.io/exclude-from-external-load-balancers"] = "")],
  ["being deleted", (n) => (n.metadata!.deletionTimestamp = new Date("2026-01-02T00:00:00Z"))],
])("a node %s is still judged so once trimmed", (_, change) => {
  const node = fullNode();
  change(node);
  const before = ineligibility(node);
  expect(before).toBeDefined();
  trimNode(node);
  expect(ineligibility(node)).toBe(before);
});
