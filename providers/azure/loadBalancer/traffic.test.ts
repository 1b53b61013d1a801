import { describe, expect, it } from "vitest";
import { desired, intent } from "../../../test/unit/support/azure.ts";
import { azureTraffic } from "./traffic.ts";

const ep = (ip: string, nodeName: string) => ({ ip, nodeName, ports: { http: 8080 } });

describe("azureTraffic", () => {
  it("flows with backends and a ready endpoint, and says it is judged, not measured", () => {
    const i = intent({ endpoints: [ep("10.244.0.5", "node-a")] });
    const t = azureTraffic(i, desired(i), "instance");
    expect(t.flowing).toBe(true);
    expect(t.reason).toBe("BackendsReady");
    expect(t.message).toMatch(
      /^2 of 2 backends should pass their probes \(judged from the cluster's endpoints/,
    );
  });

  it("does not flow without an eligible node", () => {
    const i = intent({ nodes: [], endpoints: [ep("10.244.0.5", "node-a")] });
    expect(azureTraffic(i, desired(i), "instance")).toMatchObject({ flowing: false, reason: "NoBackends" });
  });

  it("does not flow without a ready endpoint, whatever the nodes", () => {
    const i = intent();
    expect(azureTraffic(i, desired(i), "instance")).toMatchObject({
      flowing: false,
      reason: "NoReadyEndpoints",
    });
  });

  it("with Local, only backend nodes holding a ready endpoint pass", () => {
    const local = (nodeName: string) =>
      intent({
        externalTrafficPolicy: "Local",
        healthCheckNodePort: 32000,
        endpoints: [ep("10.244.9.5", nodeName)],
      });
    const elsewhere = local("node-z");
    expect(azureTraffic(elsewhere, desired(elsewhere), "instance")).toMatchObject({
      flowing: false,
      reason: "NoLocalEndpoints",
    });
    const onB = local("node-b");
    expect(azureTraffic(onB, desired(onB), "instance").message).toMatch(/^1 of 2 backends/);
  });

  it("ip backends are the ready endpoints", () => {
    const i = intent({ endpoints: [ep("10.0.1.50", "node-a")], allocateNodePorts: false });
    const d = desired(i);
    expect(azureTraffic(i, d, "ip")).toMatchObject({ flowing: true });
    const empty = azureTraffic(i, { ...d, pool: { ...d.pool, addresses: [] } }, "ip");
    expect(empty.flowing).toBe(false);
    expect(empty.message).toContain("no ready endpoint");
  });

  it("no rule at all carries nothing", () => {
    const i = intent({ endpoints: [ep("10.244.0.5", "node-a")] });
    expect(azureTraffic(i, { ...desired(i), rules: [] }, "instance")).toMatchObject({
      flowing: false,
      reason: "NoRules",
    });
  });
});
