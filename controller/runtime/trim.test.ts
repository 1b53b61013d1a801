import type { V1EndpointSlice, V1Namespace, V1Node, V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { ineligibility } from "../../shared/nodeEligibility.ts";
import { nodeFingerprint } from "./nodeFingerprint.ts";
import { LAST_APPLIED_ANNOTATION, trimEndpointSlice, trimNamespace, trimNode, trimService } from "./trim.ts";

const managedFields = [{ manager: "kubelet", operation: "Update", fieldsV1: { "f:status": {} } }];

function fullNode(): V1Node {
  return {
    metadata: {
      name: "n1",
      uid: "u1",
      resourceVersion: "7",
      creationTimestamp: new Date("2026-01-01T00:00:00Z"),
      ownerReferences: [{ apiVersion: "v1", kind: "Machine", name: "m1", uid: "m" }],
      labels: { "topology.kubernetes.io/zone": "a", role: "edge" },
      annotations: {
        "node.alpha.kubernetes.io/ttl": "0",
        "flannel.alpha.coreos.com/backend-data": "x".repeat(500),
      },
      managedFields,
    },
    spec: {
      providerID: "aws:///a/i-0123456789abcdef0",
      taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }],
      podCIDR: "10.244.1.0/24",
    },
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" },
        { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory", message: "ok" },
      ],
      addresses: [
        { type: "InternalIP", address: "10.0.0.1" },
        { type: "InternalIP", address: "fd00::1" },
        { type: "Hostname", address: "n1" },
      ],
      images: [{ names: ["registry.example/app:1"], sizeBytes: 123 }],
      capacity: { cpu: "4" },
      nodeInfo: {
        architecture: "amd64",
        bootID: "",
        containerRuntimeVersion: "",
        kernelVersion: "",
        kubeProxyVersion: "",
        kubeletVersion: "",
        machineID: "",
        operatingSystem: "linux",
        osImage: "",
        systemUUID: "",
      },
      volumesAttached: [{ name: "vol", devicePath: "/dev/xvdf" }],
    },
  };
}

describe("what the informers keep", () => {
  test("a Node keeps what eligibility and targets read, and loses images, capacities, volumes, other conditions and annotations", () => {
    const node = fullNode();
    const before = { fingerprint: nodeFingerprint(node), ineligible: ineligibility(node) };
    trimNode(node);
    expect(node).toEqual({
      metadata: { name: "n1", uid: "u1", resourceVersion: "7", labels: fullNode().metadata!.labels },
      spec: { providerID: "aws:///a/i-0123456789abcdef0", taints: fullNode().spec!.taints },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: fullNode().status!.addresses,
      },
    });
    // Nothing the controller decides from a Node changes.
    expect({ fingerprint: nodeFingerprint(node), ineligible: ineligibility(node) }).toEqual(before);
  });

  test("what decides a Node's eligibility survives trimming: not Ready, tainted for removal, excluded, being deleted, cordoned", () => {
    const variants: ((n: V1Node) => void)[] = [
      (n) => (n.status!.conditions![0]!.status = "False"),
      (n) => (n.status!.conditions = n.status!.conditions!.filter((c) => c.type !== "Ready")),
      (n) => n.spec!.taints!.push({ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule" }),
      (n) => (n.metadata!.labels!["node.kubernetes.io/exclude-from-external-load-balancers"] = ""),
      (n) => (n.metadata!.deletionTimestamp = new Date("2026-01-02T00:00:00Z")),
      (n) => (n.spec!.unschedulable = true),
    ];
    for (const change of variants) {
      const node = fullNode();
      node.spec!.taints = [];
      change(node);
      const before = { fingerprint: nodeFingerprint(node), ineligible: ineligibility(node) };
      expect(before.ineligible).toBeDefined();
      trimNode(node);
      expect({ fingerprint: nodeFingerprint(node), ineligible: ineligibility(node) }).toEqual(before);
    }
  });

  test("trimming twice is trimming once", () => {
    const node = fullNode();
    trimNode(node);
    const once = structuredClone(node);
    trimNode(node);
    expect(node).toEqual(once);
    const svc: V1Service = {
      metadata: { name: "web", annotations: { [LAST_APPLIED_ANNOTATION]: "{}", a: "b" } },
    };
    trimService(svc);
    const svcOnce = structuredClone(svc);
    trimService(svc);
    expect(svc).toEqual(svcOnce);
    const slice: V1EndpointSlice = {
      addressType: "IPv4",
      metadata: { name: "s", labels: { "kubernetes.io/service-name": "web" }, generateName: "web-" },
      endpoints: [{ addresses: ["10.0.0.1"], conditions: { ready: true }, nodeName: "n1" }],
    };
    trimEndpointSlice(slice);
    const sliceOnce = structuredClone(slice);
    trimEndpointSlice(slice);
    expect(slice).toEqual(sliceOnce);
  });

  test("a Service keeps everything but managedFields and kubectl's last-applied copy", () => {
    const svc: V1Service = {
      metadata: {
        name: "web",
        annotations: {
          a: "b",
          [LAST_APPLIED_ANNOTATION]: JSON.stringify({ spec: { type: "LoadBalancer" } }),
        },
        finalizers: ["f"],
        managedFields,
      },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
      status: { loadBalancer: { ingress: [{ ip: "192.0.2.1" }] } },
    };
    trimService(svc);
    expect(svc).toEqual({
      metadata: { name: "web", annotations: { a: "b" }, finalizers: ["f"] },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
      status: { loadBalancer: { ingress: [{ ip: "192.0.2.1" }] } },
    });
  });

  test("an EndpointSlice keeps its labels, ports and each endpoint's addresses, conditions, node and zone", () => {
    const slice: V1EndpointSlice = {
      addressType: "IPv4",
      metadata: {
        name: "web-abc",
        namespace: "shop",
        generateName: "web-",
        generation: 3,
        creationTimestamp: new Date("2026-01-01T00:00:00Z"),
        ownerReferences: [{ apiVersion: "v1", kind: "Service", name: "web", uid: "s1", controller: true }],
        labels: { "kubernetes.io/service-name": "web" },
        annotations: { "endpoints.kubernetes.io/last-change-trigger-time": "x" },
        managedFields,
      },
      ports: [{ name: "http", port: 8080 }],
      endpoints: [
        {
          addresses: ["10.244.1.5"],
          conditions: { ready: true, serving: true, terminating: false },
          nodeName: "n1",
          zone: "a",
          targetRef: { kind: "Pod", name: "web-1", namespace: "shop", uid: "p1" },
          hints: { forZones: [{ name: "a" }] },
        },
        { addresses: ["10.244.2.5"], conditions: { ready: false } },
      ],
    };
    trimEndpointSlice(slice);
    expect(slice).toEqual({
      addressType: "IPv4",
      metadata: { name: "web-abc", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
      ports: [{ name: "http", port: 8080 }],
      endpoints: [
        {
          addresses: ["10.244.1.5"],
          conditions: { ready: true, serving: true, terminating: false },
          nodeName: "n1",
          zone: "a",
          targetRef: { kind: "Pod", name: "web-1", uid: "p1" },
        },
        { addresses: ["10.244.2.5"], conditions: { ready: false } },
      ],
    });
  });

  test("a Namespace keeps its name and labels", () => {
    const ns: V1Namespace = {
      metadata: { name: "shop", labels: { team: "a" }, annotations: { x: "y" }, managedFields },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
    };
    trimNamespace(ns);
    expect(ns).toEqual({ metadata: { name: "shop", labels: { team: "a" } } });
  });
});
