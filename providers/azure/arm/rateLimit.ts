// The limits Portico's ARM client keeps to (providers/rateLimit.ts does the keeping: one limiter per client,
// shared by every reconcile, learning the subscription's share from throttles, users' changes before resync),
// as Azure documents them (https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling):
//
// - ARM, since 2024: token buckets per subscription, per service principal and per operation type, reads 250
//   refilling 25/s, writes 200 refilling 10/s, deletes 200 refilling 10/s. The subscription's global limit (15
//   times these, over every principal) is the other principals' business: when they leave Portico less, its
//   throttles teach the limiter so.
// - The Microsoft.Network resource provider: 1000 writes and deletes together, and 10000 reads, per 5 minutes and
//   subscription. Kept as sliding windows (no more in any 5 minutes), the stricter reading of "per 5 minutes":
//   a token bucket that never breaks such a window must give up most of its burst or of its rate.
//
// The throttled answer says which limit it was: `SubscriptionRequestsThrottled` is ARM's bucket,
// `ResourceRequestsThrottled` the resource provider's. A 429 with another code (NRP's `RetryableError` for a
// resource another operation holds) is no throttle and teaches nothing.
import {
  rateLimiterOptionsFromEnv as optionsFromEnv,
  type Limit,
  type RateLimiterOptions,
} from "../../rateLimit.ts";

export type OperationType = "reads" | "writes" | "deletes";

export const ARM_LIMITS: Record<OperationType, Limit> = {
  reads: { capacity: 250, refillPerSecond: 25 },
  writes: { capacity: 200, refillPerSecond: 10 },
  deletes: { capacity: 200, refillPerSecond: 10 },
};

export const NETWORK_LIMITS: Record<"reads" | "writes", Limit> = {
  reads: { capacity: 10000, refillPerSecond: 10000 / 300, windowSeconds: 300 },
  writes: { capacity: 1000, refillPerSecond: 1000 / 300, windowSeconds: 300 },
};

export function operationType(method: string): OperationType {
  const m = method.toUpperCase();
  return m === "GET" || m === "HEAD" ? "reads" : m === "DELETE" ? "deletes" : "writes";
}

/** The limits a request counts against: ARM's bucket for its type and, for Microsoft.Network, NRP's window. */
export function limitsOf(method: string, url: string): { bucket: string; limit: Limit }[] {
  const type = operationType(method);
  const out = [{ bucket: `arm:${type}`, limit: ARM_LIMITS[type] }];
  if (/\/providers\/Microsoft\.Network\//i.test(new URL(url).pathname)) {
    const nrp = type === "reads" ? "reads" : "writes";
    out.push({ bucket: `network:${nrp}`, limit: NETWORK_LIMITS[nrp] });
  }
  return out;
}

/** Which of a request's limits a throttled answer's code names; none for a 429 that is no throttle. */
export function throttledLimit(code: string | undefined, buckets: string[]): string | undefined {
  if (code === "ResourceRequestsThrottled")
    return buckets.find((b) => b.startsWith("network:")) ?? buckets[0];
  if (code === "SubscriptionRequestsThrottled" || code === "TooManyRequests") return buckets[0];
  return undefined;
}

/** The limiter's settings from the environment: undefined when PORTICO_AZURE_RATE_LIMIT=off. */
export function rateLimiterOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): RateLimiterOptions | undefined {
  return optionsFromEnv("PORTICO_AZURE", env);
}
