// ARM's throttling as the emulator keeps it (throttling.ts): the documented buckets and windows, the principal's
// and the subscription's buckets, the reserve, the floor; and through the server, the answers the SDK sees.
import { describe, expect, test } from "vitest";
import { ArmThrottling, SlidingWindow, validateThrottling, type ThrottledRequest } from "./throttling.ts";
import { FAST, createPublicIp, seedNetwork, subscriptionPath, useTestbed } from "./testbed.ts";

/** A clock the test moves. */
const clock = () => {
  let t = 0;
  return { now: () => t, set: (s: number) => void (t = s) };
};

const request = (method: string, over: Partial<ThrottledRequest> = {}): ThrottledRequest => ({
  method,
  path: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/loadBalancers/lb",
  subscriptionId: "s",
  principal: "portico",
  networkType: "Microsoft.Network/loadBalancers",
  ...over,
});

/** How many of `n` requests at the clock's time are let through. */
const admitted = (t: ArmThrottling, n: number, req: ThrottledRequest) =>
  Array.from({ length: n }, () => t.admit(req)).filter((v) => !v.refusal).length;

describe("ARM's token buckets", () => {
  test("a principal gets 250 reads at once, then 25 a second; writes and deletes 200, then 10 a second", () => {
    const c = clock();
    const t = new ArmThrottling({ now: c.now });
    expect(admitted(t, 300, request("GET"))).toBe(250);
    expect(admitted(t, 300, request("PUT"))).toBe(200);
    expect(admitted(t, 300, request("POST"))).toBe(0); // POST is a write
    expect(admitted(t, 300, request("DELETE"))).toBe(200);
    c.set(2);
    expect(admitted(t, 100, request("GET"))).toBe(50);
    expect(admitted(t, 100, request("PATCH"))).toBe(20);
    expect(admitted(t, 100, request("DELETE"))).toBe(20);
  });

  test("each principal has its own buckets; the subscription's global one is 15 times a principal's", () => {
    const c = clock();
    const t = new ArmThrottling({
      now: c.now,
      overrides: { "network:writes": { limit: 1e6, windowSeconds: 1 } },
    });
    let total = 0;
    for (let p = 0; p < 20; p++) total += admitted(t, 300, request("PUT", { principal: `p${p}` }));
    expect(total).toBe(3000);
    // Refusals count against the bucket that was empty: the principal's for the last 100 of each of the first
    // fifteen principals; the subscription's from the moment it is empty (the fifteenth's last 100, and every
    // request of the last five, whose own buckets a refused request leaves full).
    expect(t.counts.get("global:writes")).toMatchObject({ admitted: 3000, throttled: 100 + 5 * 300 });
    expect(t.counts.get("principal:writes")).toMatchObject({ admitted: 3000, throttled: 15 * 100 });
    expect(t.throttled()).toBe(20 * 300 - 3000);
  });

  test("a throttled answer is ARM's: 429 SubscriptionRequestsThrottled, Retry-After in whole seconds", () => {
    const c = clock();
    const t = new ArmThrottling({ now: c.now });
    admitted(t, 200, request("PUT"));
    const v = t.admit(request("PUT"));
    expect(v.refusal).toMatchObject({ status: 429, code: "SubscriptionRequestsThrottled" });
    expect(v.refusal!.headers["Retry-After"]).toBe("1");
    expect(v.refusal!.message).toMatch(
      /^Number of requests for subscription 's' and operation 'PUT\/SUBSCRIPTIONS/,
    );
    expect(v.headers).toEqual({
      "x-ms-ratelimit-remaining-subscription-writes": "0",
      "x-ms-ratelimit-remaining-subscription-global-writes": "2800",
    });
    c.set(0.5);
    expect(t.admit(request("GET")).headers).toEqual({
      "x-ms-ratelimit-remaining-subscription-reads": "249",
      "x-ms-ratelimit-remaining-subscription-global-reads": "3749",
    });
  });

  test("the reserve and the scale shrink every limit", () => {
    const t = new ArmThrottling({ reserve: 0.5, scale: 0.1, now: () => 0 });
    expect(t.bucketSpec("principal:reads")).toEqual({ capacity: 12.5, refillPerSecond: 1.25 });
    expect(t.bucketSpec("global:deletes")).toEqual({ capacity: 150, refillPerSecond: 7.5 });
    expect(t.windowSpec("network:writes")).toEqual({ limit: 50, windowSeconds: 300 });
    expect(admitted(t, 20, request("GET"))).toBe(12);
  });
});

describe("the Microsoft.Network resource provider's windows", () => {
  test("1000 writes and deletes together in any 5 minutes, answered with ResourceRequestsThrottled", () => {
    const c = clock();
    const t = new ArmThrottling({ now: c.now });
    let n = 0;
    for (let s = 0; s < 100; s++) {
      c.set(s * 2);
      n += admitted(t, 10, request(s % 2 ? "PUT" : "DELETE"));
    }
    expect(n).toBe(1000);
    c.set(200);
    const v = t.admit(request("PUT"));
    expect(v.refusal).toMatchObject({ status: 429, code: "ResourceRequestsThrottled" });
    expect(v.refusal!.message).toBe(
      "Number of requests for action 'Microsoft.Network/loadBalancers/write' exceeded the limit of '1000' for " +
        "time interval '00:05:00'. Please try again after '100' seconds.",
    );
    // ARM let it through, so it took ARM's token.
    expect(t.counts.get("principal:writes")!.admitted).toBe(501);
    c.set(300);
    expect(admitted(t, 20, request("PUT"))).toBe(10); // the ten sent at 0 s have left the window
  });

  test("10000 reads in any 5 minutes; requests outside NRP (resource groups) are not counted there", () => {
    const t = new ArmThrottling({
      now: () => 0,
      overrides: { "principal:reads": { capacity: 1e5, refillPerSecond: 1 } },
    });
    expect(admitted(t, 12000, request("GET"))).toBe(3750); // the global bucket binds first
    const w = new ArmThrottling({
      now: () => 0,
      overrides: {
        "principal:reads": { capacity: 1e5, refillPerSecond: 1 },
        "global:reads": { capacity: 1e5, refillPerSecond: 1 },
      },
    });
    expect(admitted(w, 12000, request("GET"))).toBe(10000);
    expect(admitted(w, 5, request("GET", { networkType: undefined }))).toBe(5);
  });

  test("a sliding window frees a place when its oldest request leaves", () => {
    const w = new SlidingWindow({ limit: 2, windowSeconds: 10 });
    expect([w.take(0), w.take(4), w.take(5)]).toEqual([true, true, false]);
    expect(w.wait(5)).toBe(5);
    expect(w.take(10)).toBe(true);
    expect(w.remaining(14)).toBe(1);
  });
});

describe("the floor", () => {
  test("the slowest limit's least time for what it admitted, from full buckets and empty windows", () => {
    const c = clock();
    const t = new ArmThrottling({ now: c.now });
    expect(t.floor()).toEqual({ seconds: 0, limit: undefined });
    for (let s = 0; s <= 40; s++) {
      c.set(s);
      admitted(t, 300, request("GET"));
    }
    // 250 + 25 × 40 reads admitted: 40 s beyond the burst, and under NRP's 10000.
    expect(t.counts.get("principal:reads")!.admitted).toBe(1250);
    expect(t.floor()).toEqual({ seconds: 40, limit: "principal:reads" });
    const w = new ArmThrottling({
      now: c.now,
      overrides: {
        "principal:writes": { capacity: 1e5, refillPerSecond: 1 },
        "global:writes": { capacity: 1e5, refillPerSecond: 1 },
      },
    });
    for (let s = 0; s <= 600; s += 300) {
      c.set(s);
      admitted(w, 1100, request("PUT"));
    }
    // 3000 writes: the 2001st could go no sooner than 600 s.
    expect(w.counts.get("network:writes")).toMatchObject({ admitted: 3000, throttled: 300 });
    expect(w.floor()).toEqual({ seconds: 600, limit: "network:writes" });
  });
});

test("settings are checked", () => {
  expect(validateThrottling({ reserve: 0.2 })).toEqual({ reserve: 0.2 });
  expect(() => validateThrottling({ reserve: 1 })).toThrow(/reserve/);
  expect(() => validateThrottling({ burst: 1 })).toThrow(/unknown throttling setting "burst"/);
  expect(() =>
    validateThrottling({ overrides: { "network:deletes": { limit: 1, windowSeconds: 1 } } }),
  ).toThrow(/no limit "network:deletes"/);
  expect(() =>
    validateThrottling({ overrides: { "principal:reads": { limit: 5, windowSeconds: 1 } } }),
  ).toThrow(/capacity > 0/);
});

describe("through the server", () => {
  const RG = "throttling-tests";
  const tb = useTestbed({}, async (tb) => {
    await seedNetwork(tb, RG);
    await createPublicIp(tb, RG, "pip");
  });
  const admin = async (method: string, body?: unknown) => {
    const res = await fetch(`${tb.azure.url}/_emulator/throttling`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  test("off by default: no rate-limit headers; on, every ARM answer carries them and excess reads get 429", async () => {
    const path = `${subscriptionPath(tb)}/resourceGroups/${RG}/providers/Microsoft.Network/publicIPAddresses/pip?api-version=2024-05-01`;
    expect((await tb.arm("GET", path)).headers.get("x-ms-ratelimit-remaining-subscription-reads")).toBeNull();
    expect(await admin("GET")).toEqual({ enabled: false });
    await admin("POST", { overrides: { "principal:reads": { capacity: 3, refillPerSecond: 0.01 } } });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await tb.arm("GET", path));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    expect(answers.map((a) => a.headers.get("x-ms-ratelimit-remaining-subscription-reads"))).toEqual([
      "2",
      "1",
      "0",
      "0",
    ]);
    expect(answers[3]!.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(answers[3]!.body).toMatchObject({ error: { code: "SubscriptionRequestsThrottled" } });
    const written = await tb.arm(
      "PUT",
      `${subscriptionPath(tb)}/resourcegroups/other?api-version=2024-11-01`,
      {
        location: "eastus",
      },
    );
    expect(written.headers.get("x-ms-ratelimit-remaining-subscription-writes")).toBe("199");
    const state = await admin("GET");
    expect(state).toMatchObject({
      enabled: true,
      throttled: 1,
      limits: {
        "principal:reads": { kind: "bucket", admitted: 3, throttled: 1 },
        "network:reads": { admitted: 3 },
      },
    });
    expect(tb.azure.requests().at(-2)).toMatchObject({ status: 429, code: "SubscriptionRequestsThrottled" });
    expect(await admin("DELETE")).toEqual({ enabled: false });
    expect((await tb.arm("GET", path)).status).toBe(200);
  });

  test("the SDK waits out a throttled write and its operation polls count as reads", async () => {
    await admin("POST", { overrides: { "principal:writes": { capacity: 1, refillPerSecond: 1 } } });
    await createPublicIp(tb, RG, "a");
    await tb.network.publicIPAddresses.beginCreateOrUpdateAndWait(
      RG,
      "b",
      { location: "eastus", sku: { name: "Standard" }, publicIPAllocationMethod: "Static" },
      FAST,
    );
    const state = (await admin("GET")) as { limits: Record<string, { admitted: number; throttled: number }> };
    expect(state.limits["principal:writes"]!.admitted).toBe(2);
    expect(state.limits["principal:writes"]!.throttled).toBeGreaterThanOrEqual(1);
    expect(state.limits["principal:reads"]!.admitted).toBeGreaterThanOrEqual(2);
    expect((await tb.network.publicIPAddresses.get(RG, "b")).provisioningState).toBe("Succeeded");
  });
});
