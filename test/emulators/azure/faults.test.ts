// Fault injection and the emulator's control API: throttling, transient errors and conflicts the SDK must ride
// through (or report), repeatable rate-based faults, reset, and the per-operation request counts.
import { NetworkManagementClient } from "@azure/arm-network";
import { describe, expect, test } from "vitest";
import { FAST, LOCATION, createPublicIp, rejection, seedNetwork, useTestbed } from "./testbed.ts";

const RG = "fault-tests";

const tb = useTestbed({}, async (tb) => {
  await seedNetwork(tb, RG);
  await createPublicIp(tb, RG, "pip");
  tb.azure.clearRequests();
});

const admin = async (
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(`${tb.azure.url}/_emulator/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe("throttling", () => {
  test("the SDK waits out 429 + Retry-After and succeeds; every attempt is counted", async () => {
    tb.azure.addFault({
      kind: "throttle",
      methods: ["GET"],
      pathContains: "/publicIPAddresses/",
      count: 2,
      retryAfterSeconds: 0,
    });
    const pip = await tb.network.publicIPAddresses.get(RG, "pip");
    expect(pip.name).toBe("pip");
    expect(tb.azure.requestCounts()["GET publicIPAddresses"]).toBe(3);
    expect(
      tb.azure
        .requests()
        .filter((r) => r.status === 429)
        .map((r) => r.code),
    ).toEqual(["SubscriptionRequestsThrottled", "SubscriptionRequestsThrottled"]);
  });

  test("without retries the caller sees 429 SubscriptionRequestsThrottled with Retry-After", async () => {
    tb.azure.addFault({ kind: "throttle", retryAfterSeconds: 7 });
    const res = await tb.arm(
      "GET",
      `/subscriptions/${tb.azure.subscriptionId}/resourceGroups/${RG}/providers/Microsoft.Network/publicIPAddresses/pip?api-version=2026-01-01`,
    );
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
    expect((res.body!.error as { message: string }).message).toContain("Please try again after '7' seconds.");
  });
});

describe("transient errors and conflicts", () => {
  test("a 503 is retried by the SDK; a 500 without retries reaches the caller as InternalServerError", async () => {
    tb.azure.addFault({ kind: "serverError", status: 503, count: 1, methods: ["GET"] });
    const patient = new NetworkManagementClient(tb.credential, tb.azure.subscriptionId, {
      endpoint: tb.azure.url,
      retryOptions: { retryDelayInMs: 5, maxRetryDelayInMs: 20 },
    });
    expect((await patient.publicIPAddresses.get(RG, "pip")).name).toBe("pip");
    expect(tb.azure.requests().map((r) => r.status)).toEqual([503, 200]);
    tb.azure.addFault({ kind: "serverError", count: 1 });
    expect(await rejection(tb.strict.publicIPAddresses.get(RG, "pip"))).toMatchObject({
      status: 500,
      code: "InternalServerError",
    });
  });

  test("a conflict fault answers writes with 409 AnotherOperationInProgress and leaves reads alone", async () => {
    tb.azure.addFault({ kind: "conflict", count: 1 });
    expect((await tb.strict.publicIPAddresses.get(RG, "pip")).name).toBe("pip");
    const write = tb.strict.publicIPAddresses.createOrUpdate(
      RG,
      "pip",
      { location: LOCATION, sku: { name: "Standard" }, publicIPAllocationMethod: "Static", tags: { a: "b" } },
      FAST,
    );
    expect(await rejection(write)).toMatchObject({ status: 409, code: "AnotherOperationInProgress" });
  });
});

describe("the control API", () => {
  test("rate-based faults are repeatable for a given seed", async () => {
    const run = async (): Promise<number[]> => {
      tb.azure.reset();
      await seedNetwork(tb, RG);
      expect(
        (
          await admin("POST", "faults", {
            seed: 42,
            faults: [{ kind: "throttle", rate: 0.5, methods: ["GET"] }],
          })
        ).status,
      ).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++)
        statuses.push(
          (
            await tb.arm(
              "GET",
              `/subscriptions/${tb.azure.subscriptionId}/resourceGroups/${RG}/providers/Microsoft.Network/virtualNetworks/vnet?api-version=2026-01-01`,
            )
          ).status,
        );
      return statuses;
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    const throttledCount = first.filter((s) => s === 429).length;
    expect(throttledCount).toBeGreaterThan(2);
    expect(throttledCount).toBeLessThan(18);
    const faults = (await admin("GET", "faults")).body.faults as { injected: number }[];
    expect(faults[0]!.injected).toBe(throttledCount);
  });

  test("an invalid fault is refused; DELETE removes all faults", async () => {
    expect((await admin("POST", "faults", { kind: "explode" })).status).toBe(400);
    await admin("POST", "faults", [{ kind: "throttle", count: 5 }]);
    expect((await admin("GET", "faults")).body.faults).toHaveLength(1);
    await admin("DELETE", "faults");
    expect((await admin("GET", "faults")).body.faults).toEqual([]);
  });

  test("reset empties the subscription; the request log counts ARM calls by operation", async () => {
    await tb.network.publicIPAddresses.get(RG, "pip");
    const log = (await admin("GET", "requests")).body as { total: number; counts: Record<string, number> };
    expect(log.counts).toEqual({ "GET publicIPAddresses": 1 });
    expect((await admin("POST", "reset")).status).toBe(200);
    expect((await admin("GET", "requests")).body.total).toBe(0);
    expect(await rejection(tb.strict.publicIPAddresses.get(RG, "pip"))).toMatchObject({
      status: 404,
      code: "ResourceGroupNotFound",
    });
  });

  test("config changes the operation duration and Retry-After of later writes", async () => {
    const changed = await admin("POST", "config", { operationDurationMs: 250, retryAfterSeconds: 3 });
    expect(changed.body).toMatchObject({
      operationDurationMs: 250,
      retryAfterSeconds: 3,
      conflictOnConcurrentWrite: true,
    });
    const res = await tb.arm(
      "PUT",
      `/subscriptions/${tb.azure.subscriptionId}/resourceGroups/${RG}/providers/Microsoft.Network/publicIPAddresses/p2?api-version=2026-01-01`,
      {
        location: LOCATION,
        sku: { name: "Standard" },
        properties: { publicIPAllocationMethod: "Static" },
      },
    );
    expect(res.headers.get("retry-after")).toBe("3");
    expect((await tb.arm("GET", res.headers.get("azure-asyncoperation")!)).body).toEqual({
      status: "InProgress",
    });
    expect((await admin("POST", "config", { operationDurationMs: -1 })).status).toBe(400);
  });
});
