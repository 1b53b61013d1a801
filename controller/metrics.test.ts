import type { V1Service } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { READY_CONDITION, SERVING_CONDITION } from "../shared/conditions.ts";
import { ControllerMetrics, countConditions } from "./metrics.ts";

function service(conditions: Record<string, string>): V1Service {
  return {
    metadata: { name: "web" },
    status: {
      conditions: Object.entries(conditions).map(([type, status]) => ({
        type,
        status,
        reason: "Test",
        message: "",
        lastTransitionTime: new Date(0),
      })),
    },
  };
}

describe("Services by condition", () => {
  test("each condition counts every Service once, absent when not written", () => {
    const counts = countConditions([
      service({ [READY_CONDITION]: "True", [SERVING_CONDITION]: "True" }),
      service({ [READY_CONDITION]: "True", [SERVING_CONDITION]: "False" }),
      service({ [READY_CONDITION]: "False" }),
      service({ "some.other/Condition": "True" }),
    ]);
    expect(Object.fromEntries(counts.get("LoadBalancerReady")!)).toEqual({
      True: 2,
      False: 1,
      Unknown: 0,
      absent: 1,
    });
    expect(Object.fromEntries(counts.get("Serving")!)).toEqual({ True: 1, False: 1, Unknown: 0, absent: 2 });
  });

  test("no Services: every status at zero, so an alert on False sees a series", () => {
    const counts = countConditions([]);
    expect([...counts.keys()]).toEqual(["LoadBalancerReady", "Serving"]);
    for (const byStatus of counts.values()) expect([...byStatus.values()]).toEqual([0, 0, 0, 0]);
  });
});

describe("scraped", () => {
  test("portico_services and portico_pool_addresses read their sources when scraped", async () => {
    const metrics = new ControllerMetrics();
    metrics.servicesSource = () => [service({ [SERVING_CONDITION]: "False" })];
    metrics.poolCountsSource = () => [
      { pool: "lan", assignedIPv4: 3n, availableIPv4: 1n, assignedIPv6: 0n, availableIPv6: 2n ** 64n },
    ];
    const text = await metrics.registry.metrics();
    expect(text).toContain('portico_services{condition="Serving",status="False"} 1');
    expect(text).toContain('portico_services{condition="LoadBalancerReady",status="absent"} 1');
    expect(text).toContain('portico_pool_addresses{pool="lan",family="IPv4",state="assigned"} 3');
    expect(text).toContain('portico_pool_addresses{pool="lan",family="IPv4",state="available"} 1');
    expect(text).toContain(
      'portico_pool_addresses{pool="lan",family="IPv6",state="available"} 18446744073709552000',
    );
    // A pool gone since the last scrape leaves no series behind.
    metrics.poolCountsSource = () => [];
    expect(await metrics.registry.metrics()).not.toContain("portico_pool_addresses{");
  });
});
