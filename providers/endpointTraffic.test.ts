import { describe, expect, test } from "vitest";
import { intent } from "../test/unit/support/awsIntent.ts";
import { drainingNodes, endpointsBlock, type TrafficPath } from "./endpointTraffic.ts";
import type { EndpointTarget } from "./provider.ts";

const on = (nodeName?: string): EndpointTarget => ({
  ip: "10.0.1.5",
  ...(nodeName ? { nodeName } : {}),
  ports: { http: 8080 },
});
const PODS: TrafficPath = { kind: "pods" };
const nodes = (...names: string[]): TrafficPath => ({ kind: "nodes", names: new Set(names) });

describe("whether the cluster's endpoints let a load balancer's traffic through", () => {
  // Every path and policy: with no ready endpoint nothing flows, whatever the cloud says of its targets.
  for (const policy of ["Cluster", "Local"] as const)
    for (const path of [PODS, nodes("n1", "n2"), nodes()])
      test(`no endpoint: NoReadyEndpoints (${policy}, ${path.kind})`, () => {
        const t = endpointsBlock(intent({ externalTrafficPolicy: policy, endpoints: [] }), path);
        expect(t).toMatchObject({ flowing: false, reason: "NoReadyEndpoints" });
        expect(t?.message).toMatch(/spec\.selector/);
      });

  test("Cluster: any ready endpoint lets every target node forward", () => {
    expect(endpointsBlock(intent({ endpoints: [on("elsewhere")] }), nodes("n1"))).toBeUndefined();
    expect(endpointsBlock(intent({ endpoints: [on()] }), nodes("n1"))).toBeUndefined();
  });

  test("Local: a ready endpoint on a target node lets traffic through", () => {
    const i = intent({ externalTrafficPolicy: "Local", endpoints: [on("n3"), on("n2")] });
    expect(endpointsBlock(i, nodes("n1", "n2"))).toBeUndefined();
  });

  test("Local: endpoints only on nodes that are not targets: NoLocalEndpoints, naming where they run", () => {
    const i = intent({ externalTrafficPolicy: "Local", endpoints: [on("n3"), on("n4"), on("n3")] });
    const t = endpointsBlock(i, nodes("n1", "n2"));
    expect(t).toMatchObject({ flowing: false, reason: "NoLocalEndpoints" });
    expect(t?.message).toMatch(/they run on n3, n4, which are not targets/);
    expect(
      endpointsBlock(intent({ externalTrafficPolicy: "Local", endpoints: [on("n3")] }), nodes())?.message,
    ).toMatch(/run on n3, which is not a target/);
  });

  test("Local: an endpoint naming no node is local to none (kube-proxy matches nodeName)", () => {
    const t = endpointsBlock(intent({ externalTrafficPolicy: "Local", endpoints: [on()] }), nodes("n1"));
    expect(t).toMatchObject({ reason: "NoLocalEndpoints" });
  });

  test("pods: the endpoints are the targets, wherever they run", () => {
    const i = intent({ externalTrafficPolicy: "Local", endpoints: [on("n9")] });
    expect(endpointsBlock(i, PODS)).toBeUndefined();
  });
});

describe("nodes whose Local endpoints all drain", () => {
  const at = (ip: string, nodeName?: string): EndpointTarget => ({
    ip,
    ...(nodeName ? { nodeName } : {}),
    ports: { http: 8080 },
  });
  const local = (endpoints: EndpointTarget[], drainingEndpoints: EndpointTarget[]) =>
    drainingNodes(intent({ externalTrafficPolicy: "Local", endpoints, drainingEndpoints }));

  test("a node with only terminating endpoints drains; one with a ready endpoint beside them does not", () => {
    const draining = local(
      [at("10.0.1.1", "n1"), at("10.0.1.2", "n2")],
      [at("10.0.1.3", "n2"), at("10.0.1.4", "n3"), at("10.0.1.5", "n3")],
    );
    expect([...draining]).toEqual(["n3"]);
  });

  test("nodes without endpoints, endpoints naming no node, and Cluster Services drain nothing", () => {
    expect(local([at("10.0.1.1", "n1")], []).size).toBe(0);
    expect(local([at("10.0.1.1", "n1")], [at("10.0.1.2")]).size).toBe(0);
    const cluster = intent({
      externalTrafficPolicy: "Cluster",
      endpoints: [at("10.0.1.1", "n1")],
      drainingEndpoints: [at("10.0.1.2", "n2")],
    });
    expect(drainingNodes(cluster).size).toBe(0);
  });
});
