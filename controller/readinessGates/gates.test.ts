import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import {
  GATED_POD_LABEL,
  gatedPod,
  gatesFor,
  gateType,
  injection,
  serviceOfGate,
  waitsForGate,
} from "./gates.ts";

const svc = (
  name: string,
  selector: Record<string, string> | undefined,
  type = "LoadBalancer",
): V1Service => ({
  metadata: { name, namespace: "shop" },
  spec: { type, ...(selector ? { selector } : {}) },
});

const pod = (labels?: Record<string, string>, gates: string[] = []): V1Pod => ({
  metadata: { name: "web-1", namespace: "shop", ...(labels ? { labels } : {}) },
  spec: {
    containers: [],
    ...(gates.length ? { readinessGates: gates.map((conditionType) => ({ conditionType })) } : {}),
  },
});

describe("which gates a new pod gets", () => {
  const services = [
    svc("web", { app: "web" }),
    svc("web-admin", { app: "web", tier: "admin" }),
    svc("all", {}),
    svc("headless", undefined),
    svc("internal", { app: "web" }, "ClusterIP"),
    svc("instance", { app: "web" }),
    svc("api", { app: "api" }),
  ];
  const pods = (s: V1Service) => s.metadata!.name !== "instance";

  test("one per LoadBalancer Service that selects it and sends to pods", () => {
    expect(gatesFor(pod({ app: "web" }), services, pods)).toEqual([gateType("web")]);
    expect(gatesFor(pod({ app: "web", tier: "admin" }), services, pods)).toEqual([
      gateType("web"),
      gateType("web-admin"),
    ]);
    expect(gatesFor(pod({ app: "db" }), services, pods)).toEqual([]);
    expect(gatesFor(pod(), services, pods)).toEqual([]);
  });

  test("none twice", () => {
    expect(gatesFor(pod({ app: "web" }, [gateType("web")]), services, pods)).toEqual([]);
  });
});

describe("the webhook's patch", () => {
  test("adds the gates and the label that lets the controller watch the pod", () => {
    expect(injection(pod({ app: "web" }), [gateType("web")])).toEqual([
      { op: "add", path: "/spec/readinessGates", value: [{ conditionType: "target-health.portico.io/web" }] },
      { op: "add", path: "/metadata/labels/portico.io~1readiness-gated", value: "true" },
    ]);
  });

  test("appends to gates the pod has, and makes labels when it has none", () => {
    expect(injection(pod(undefined, ["example.com/other"]), [gateType("a"), gateType("b")])).toEqual([
      { op: "add", path: "/spec/readinessGates/-", value: { conditionType: "target-health.portico.io/a" } },
      { op: "add", path: "/spec/readinessGates/-", value: { conditionType: "target-health.portico.io/b" } },
      { op: "add", path: "/metadata/labels", value: { [GATED_POD_LABEL]: "true" } },
    ]);
  });

  test("is empty when there is nothing to add", () => {
    expect(injection(pod({ app: "web" }), [])).toEqual([]);
  });
});

describe("a gated pod as the controller reads it", () => {
  const withStatus = (conditions: [string, string][]): V1Pod => ({
    ...pod({}, [gateType("web"), gateType("api"), "example.com/other"]),
    metadata: { name: "web-1", uid: "u1" },
    status: { conditions: conditions.map(([type, status]) => ({ type, status })) },
  });

  test("its gates, which are open, and whether its containers are ready", () => {
    const p = gatedPod(
      withStatus([
        ["ContainersReady", "True"],
        [gateType("api"), "True"],
      ]),
    )!;
    expect(p).toEqual({ uid: "u1", services: ["web", "api"], open: ["api"], containersReady: true });
    expect(waitsForGate(p, "web")).toBe(true);
    expect(waitsForGate(p, "api")).toBe(false);
    expect(waitsForGate(p, "other")).toBe(false);
  });

  test("a pod whose containers are not ready waits for them, not for the gate", () => {
    const p = gatedPod(withStatus([["ContainersReady", "False"]]));
    expect(waitsForGate(p, "web")).toBe(false);
  });

  test("a pod without Portico's gates is none of its business", () => {
    expect(gatedPod(pod({}, ["example.com/other"]))).toBeUndefined();
    expect(waitsForGate(undefined, "web")).toBe(false);
    expect(serviceOfGate("example.com/web")).toBeUndefined();
    expect(serviceOfGate(gateType("web"))).toBe("web");
  });
});
