import { describe, expect, it } from "vitest";
import { node, service, slice } from "../../test/unit/support/controllerObjects.ts";
import { trafficChecks } from "./doctorTraffic.ts";

const nodes = [
  node("a", { labels: { pool: "edge" } }),
  node("b", { labels: { pool: "edge" } }),
  node("c", { labels: { pool: "core" } }),
];
const INSTANCE = { type: "instance" } as const;
const check = (findings: ReturnType<typeof trafficChecks>, name: string) =>
  findings.find((f) => f.check === name)!;

describe("trafficChecks", () => {
  it("counts only the nodes the controller would target: its node selector and the Service's target-node labels", () => {
    const svc = service(
      {},
      { "service.beta.kubernetes.io/aws-load-balancer-target-node-labels": "pool=edge" },
    );
    const f = trafficChecks({
      svc,
      targets: INSTANCE,
      nodes,
      slices: [],
      pods: [],
      nodeSelector: "pool in (edge,core)",
    });
    expect(check(f, "nodes")).toMatchObject({ result: "ok" });
    expect(check(f, "nodes").detail).toMatch(
      /^2 of 3 nodes are targets; left out: c \(not matched by service.beta/,
    );
  });

  it("a cordoned node is named as such, unless every target is cordoned and it keeps the traffic", () => {
    const draining = [node("a"), node("b", { cordoned: true })];
    const f = check(
      trafficChecks({ svc: service(), targets: INSTANCE, nodes: draining, slices: [], pods: [] }),
      "nodes",
    );
    expect(f.detail).toBe("1 of 2 nodes are targets; left out: b (cordoned (spec.unschedulable))");
    const all = [node("a", { cordoned: true }), node("b", { cordoned: true })];
    const g = check(
      trafficChecks({ svc: service(), targets: INSTANCE, nodes: all, slices: [], pods: [] }),
      "nodes",
    );
    expect(g).toMatchObject({ result: "ok", detail: "2 of 2 nodes are targets" });
  });

  it("with externalTrafficPolicy Local a cordoned node is still a target", () => {
    const nodes = [node("a"), node("b", { cordoned: true })];
    const svc = service({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 });
    const f = check(trafficChecks({ svc, targets: INSTANCE, nodes, slices: [], pods: [] }), "nodes");
    expect(f.detail).toBe("2 of 2 nodes are targets");
  });

  it("a target-node selector that matches no node is bad, and the fix is about the selector", () => {
    const svc = service({}, { "portico.io/target-node-labels": "pool=gpu" });
    const f = check(trafficChecks({ svc, targets: INSTANCE, nodes, slices: [], pods: [] }), "nodes");
    expect(f.result).toBe("bad");
    expect(f.detail).toContain('not matched by portico.io/target-node-labels "pool=gpu"');
    expect(f.fix).toMatch(/label nodes to match the selector/);
  });

  it("names the controller's --node-selector when it is what leaves a node out", () => {
    const f = check(
      trafficChecks({
        svc: service(),
        targets: INSTANCE,
        nodes,
        slices: [],
        pods: [],
        nodeSelector: "pool=none",
      }),
      "nodes",
    );
    expect(f.result).toBe("bad");
    // Counted rather than listed: such nodes are never the Service's, and the ones its own settings leave out are.
    expect(f.detail).toContain(`3 node(s) outside the controller's --node-selector "pool=none"`);
  });

  it("a selector that does not parse is reported as such", () => {
    const svc = service({}, { "portico.io/target-node-labels": "pool in edge" });
    const f = check(trafficChecks({ svc, targets: INSTANCE, nodes, slices: [], pods: [] }), "nodes");
    expect(f.result).toBe("bad");
    expect(f.fix).toContain("write a label selector");
  });

  it("with Local, a ready endpoint on a node that is not a target does not pass the health check", () => {
    const svc = service(
      { externalTrafficPolicy: "Local", healthCheckNodePort: 32000 },
      { "portico.io/target-node-labels": "pool=edge" },
    );
    const slices = [slice([{ ip: "10.1.0.5", node: "c" }])];
    const f = check(trafficChecks({ svc, targets: INSTANCE, nodes, slices, pods: [] }), "health checks");
    expect(f.result).toBe("bad");
    expect(f.detail).toMatch(/the ready endpoints run on c, which are not targets/);
    expect(f.fix).toMatch(/schedule the pods onto target nodes/);
  });

  it("with Local, an endpoint on a target node passes", () => {
    const svc = service({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 });
    const slices = [slice([{ ip: "10.1.0.5", node: "b" }])];
    const f = check(trafficChecks({ svc, targets: INSTANCE, nodes, slices, pods: [] }), "health checks");
    expect(f).toMatchObject({ result: "ok" });
    expect(f.detail).toMatch(/1 target node\(s\) have a ready local endpoint/);
  });

  it("with ip targets nodes and kube-proxy's health checks do not decide anything", () => {
    for (const svc of [
      service({}, { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" }),
      service({ allocateLoadBalancerNodePorts: false, externalTrafficPolicy: "Local" }),
    ]) {
      const f = trafficChecks({ svc, targets: { type: "ip" }, nodes: [], slices: [], pods: [] });
      expect(check(f, "nodes").result).toBe("ok");
      expect(check(f, "health checks").detail).toMatch(/ip targets/);
    }
  });

  it("a Service the provider refuses gets no path at all: no node or health-check finding, the refusal instead", () => {
    const refused = {
      refused: {
        message: "spec.allocateLoadBalancerNodePorts: instance targets need node ports",
        fix: "use ip targets",
      },
    };
    const f = trafficChecks({ svc: service(), targets: refused, nodes, slices: [], pods: [] });
    expect(f.map((x) => x.check)).not.toContain("nodes");
    expect(f.map((x) => x.check)).not.toContain("health checks");
    expect(check(f, "targets")).toMatchObject({ result: "bad", fix: "use ip targets" });
    expect(check(f, "targets").detail).toContain("instance targets need node ports");
  });

  it("a target type that could not be asked is not guessed", () => {
    const f = trafficChecks({
      svc: service(),
      targets: { unknown: "give --azure-config" },
      nodes,
      slices: [],
      pods: [],
    });
    expect(check(f, "health checks")).toMatchObject({
      result: "warn",
      detail: "not judged: give --azure-config",
    });
    expect(check(f, "nodes").detail).not.toMatch(/ip targets/);
  });
});
