import { describe, expect, it } from "vitest";
import { limitsOf, rateLimiterOptionsFromEnv, throttledLimit } from "./rateLimit.ts";

const arm = "https://management.azure.com/subscriptions/s";
const nrp = `${arm}/resourceGroups/rg/providers/Microsoft.Network`;

describe("limitsOf: ARM's buckets by operation type, and Microsoft.Network's windows", () => {
  it.each([
    ["GET", `${nrp}/loadBalancers/lb`, ["arm:reads", "network:reads"]],
    [
      "GET",
      `${arm}/providers/Microsoft.Network/locations/eastus/operations/1`,
      ["arm:reads", "network:reads"],
    ],
    ["PUT", `${nrp}/publicIPAddresses/p`, ["arm:writes", "network:writes"]],
    ["PATCH", `${nrp}/publicIPAddresses/p`, ["arm:writes", "network:writes"]],
    ["DELETE", `${nrp}/loadBalancers/lb`, ["arm:deletes", "network:writes"]],
    ["GET", `${arm}/resourcegroups/rg`, ["arm:reads"]],
  ])("%s %s counts against %j", (method, url, buckets) => {
    expect(limitsOf(method, url).map((l) => l.bucket)).toEqual(buckets);
  });

  it("with Azure's figures", () => {
    expect(limitsOf("GET", `${nrp}/loadBalancers/lb`).map((l) => l.limit)).toEqual([
      { capacity: 250, refillPerSecond: 25 },
      { capacity: 10000, refillPerSecond: 10000 / 300, windowSeconds: 300 },
    ]);
    expect(limitsOf("DELETE", `${nrp}/loadBalancers/lb`).map((l) => l.limit)).toEqual([
      { capacity: 200, refillPerSecond: 10 },
      { capacity: 1000, refillPerSecond: 1000 / 300, windowSeconds: 300 },
    ]);
  });
});

describe("throttledLimit: which limit a 429 names", () => {
  const buckets = ["arm:writes", "network:writes"];
  it.each([
    ["SubscriptionRequestsThrottled", "arm:writes"],
    ["TooManyRequests", "arm:writes"],
    ["ResourceRequestsThrottled", "network:writes"],
    ["RetryableError", undefined],
    ["ReferencedResourceNotProvisioned", undefined],
    [undefined, undefined],
  ])("%s: %s", (code, bucket) => {
    expect(throttledLimit(code, buckets)).toBe(bucket);
  });
  it("a resource provider's throttle of a request outside Microsoft.Network falls on ARM's bucket", () => {
    expect(throttledLimit("ResourceRequestsThrottled", ["arm:reads"])).toBe("arm:reads");
  });
});

it("is on unless PORTICO_AZURE_RATE_LIMIT=off; PORTICO_AZURE_RATE_SHARE starts it at a share", () => {
  expect(rateLimiterOptionsFromEnv({})).toEqual({});
  expect(rateLimiterOptionsFromEnv({ PORTICO_AZURE_RATE_LIMIT: "off" })).toBeUndefined();
  expect(rateLimiterOptionsFromEnv({ PORTICO_AZURE_RATE_SHARE: "0.5" })).toEqual({ share: 0.5 });
});
