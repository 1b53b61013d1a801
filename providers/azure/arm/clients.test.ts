import { afterEach, describe, expect, it, vi } from "vitest";
import { CloudError } from "../../errors.ts";
import { RateLimiter } from "../../rateLimit.ts";
import {
  armError,
  classify,
  isNotFound,
  operationLabel,
  rateLimitPolicy,
  retryAfterGate,
} from "./clients.ts";

const base = "https://management.azure.com/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network";

/** A RestError as @azure/core-rest-pipeline throws it for an ARM error response. */
function restError(statusCode: number, code: string, retryAfter?: string) {
  return Object.assign(new Error(`${code}: something`), {
    name: "RestError",
    code,
    statusCode,
    response: { headers: { get: (name: string) => (name === "retry-after" ? retryAfter : undefined) } },
  });
}

describe("operationLabel", () => {
  it.each([
    ["PUT", `${base}/loadBalancers/k?api-version=2024-07-01`, "PUT loadBalancers"],
    ["GET", `${base}/loadBalancers?api-version=2024-07-01`, "GET loadBalancers (list)"],
    ["PUT", `${base}/loadBalancers/k/backendAddressPools/p`, "PUT loadBalancers/backendAddressPools"],
    ["GET", `${base}/loadBalancers/k/probes`, "GET loadBalancers/probes (list)"],
    [
      "POST",
      `${base}/loadBalancers/k/loadBalancingRules/r/health`,
      "POST loadBalancers/loadBalancingRules/health",
    ],
    ["GET", `${base}/locations/eastus/operations/123`, "GET operations"],
    ["GET", `${base}/locations/eastus/operationResults/123`, "GET operationResults"],
    ["POST", "https://login.microsoftonline.com/t/oauth2/v2.0/token", "POST other"],
  ])("%s %s is %s", (method, url, label) => {
    expect(operationLabel(method, url)).toBe(label);
  });
});

describe("classify", () => {
  it("keeps ARM's code and Retry-After, and retries throttling", () => {
    const err = classify(
      "loadBalancers:createOrUpdate",
      restError(429, "SubscriptionRequestsThrottled", "7"),
    );
    expect(err).toBeInstanceOf(CloudError);
    expect(err).toMatchObject({ code: "SubscriptionRequestsThrottled", retryable: true, retryAfterMs: 7000 });
    expect(err.message).toContain("loadBalancers:createOrUpdate failed: SubscriptionRequestsThrottled");
  });

  it.each([
    [409, "AnotherOperationInProgress", true],
    [412, "PreconditionFailed", true],
    [400, "PublicIPAddressCannotBeDeleted", true],
    [429, "RetryableError", true],
    [500, "InternalServerError", true],
    [400, "InvalidResourceReference", false],
    [403, "AuthorizationFailed", false],
    [404, "ResourceGroupNotFound", false],
  ])("%i %s is retryable: %s", (status, code, retryable) => {
    expect(classify("op", restError(status, code)).retryable).toBe(retryable);
  });

  it("reads the code of a failed long-running operation from core-lro's message", () => {
    const failed = new Error("The long-running operation has failed. InternalServerError. Try again");
    expect(armError(failed)).toMatchObject({ code: "InternalServerError" });
    expect(classify("op", failed).retryable).toBe(true);
    expect(armError(new Error("Operation was canceled"))).toMatchObject({ code: "OperationCanceled" });
  });

  it("treats a connection that failed without an answer as retryable", () => {
    expect(classify("op", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })).retryable).toBe(
      true,
    );
  });

  it("passes a CloudError through", () => {
    const err = new CloudError({ operation: "x", code: "y", message: "z", retryable: false });
    expect(classify("op", err)).toBe(err);
  });
});

describe("isNotFound", () => {
  it("knows ARM's not-found answers", () => {
    expect(isNotFound(restError(404, "ResourceNotFound"))).toBe(true);
    expect(isNotFound(restError(404, "NotFound"))).toBe(true);
    expect(isNotFound(restError(400, "InvalidResourceReference"))).toBe(false);
    expect(
      isNotFound(
        new CloudError({ operation: "x", code: "ResourceGroupNotFound", message: "", retryable: false }),
      ),
    ).toBe(true);
  });
});

describe("retryAfterGate", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds the same request, from any caller, until a throttled answer's Retry-After has passed", async () => {
    vi.useFakeTimers();
    const gate = retryAfterGate(() => Date.now());
    const start = Date.now();
    const sent: string[] = [];
    let answer = { status: 429, retryAfter: "2" };
    const send = (method: string, path: string) =>
      gate.sendRequest({ method, url: `${base}${path}?api-version=2024-07-01` } as never, (req) => {
        sent.push(`${req.method} ${new URL(req.url).pathname.split("/").pop()} +${Date.now() - start}`);
        const { status, retryAfter } = answer;
        return Promise.resolve({
          status,
          headers: { get: (n: string) => (n === "retry-after" ? retryAfter : undefined) },
        } as never);
      });
    await send("GET", "/loadBalancers");
    answer = { status: 200, retryAfter: "" };
    const again = send("GET", "/loadBalancers");
    await send("GET", "/publicIPAddresses");
    await send("PUT", "/loadBalancers");
    await vi.advanceTimersByTimeAsync(1999);
    expect(sent).toEqual(["GET loadBalancers +0", "GET publicIPAddresses +0", "PUT loadBalancers +0"]);
    await vi.advanceTimersByTimeAsync(1);
    await again;
    expect(sent.at(-1)).toBe("GET loadBalancers +2000");
    // Answered without a throttle, the request goes at once again.
    await send("GET", "/loadBalancers");
    expect(sent.at(-1)).toBe("GET loadBalancers +2000");
  });
});

describe("rateLimitPolicy", () => {
  const answer = (status: number, code?: string) => () =>
    Promise.resolve({
      status,
      headers: { get: () => undefined },
      bodyAsText: code ? JSON.stringify({ error: { code, message: "m" } }) : "",
    } as never);
  const send = (policy: ReturnType<typeof rateLimitPolicy>, method: string, status: number, code?: string) =>
    policy.sendRequest(
      { method, url: `${base}/loadBalancers/lb?api-version=2024-07-01` } as never,
      answer(status, code),
    );
  const rates = (limiter: RateLimiter) =>
    Object.fromEntries(
      limiter.stats().map((b) => [b.bucket, { rate: +b.ratePerSecond.toFixed(3), throttles: b.throttles }]),
    );

  it("never holds more of ARM's bucket than ARM says remains, the principal's or the subscription's", async () => {
    const timers: number[] = [];
    const limiter = new RateLimiter({
      headroom: 1,
      now: () => 0,
      setTimer: (_fn, ms) => void timers.push(ms),
    });
    const policy = rateLimitPolicy(limiter);
    const withHeaders = (headers: Record<string, string>) => () =>
      Promise.resolve({ status: 200, headers: { get: (n: string) => headers[n] }, bodyAsText: "" } as never);
    const put = (headers: Record<string, string>) =>
      policy.sendRequest({ method: "PUT", url: `${base}/loadBalancers/lb` } as never, withHeaders(headers));
    await put({ "x-ms-ratelimit-remaining-subscription-writes": "150" });
    await put({
      "x-ms-ratelimit-remaining-subscription-writes": "120",
      "x-ms-ratelimit-remaining-subscription-global-writes": "1",
    });
    await put({});
    expect(timers).toEqual([]);
    // One token left after the second answer, taken by the third request: the fourth waits a refill (10/s).
    void put({});
    await Promise.resolve();
    expect(timers).toEqual([100]);
  });

  it("waits on ARM's bucket and Microsoft.Network's window, and learns only from the limit a throttle names", async () => {
    const limiter = new RateLimiter({ headroom: 1 });
    const policy = rateLimitPolicy(limiter);
    await send(policy, "PUT", 201);
    await send(policy, "PUT", 429, "RetryableError");
    expect(rates(limiter)).toEqual({
      "arm:writes": { rate: 10, throttles: 0 },
      "network:writes": { rate: 3.333, throttles: 0 },
    });
    await send(policy, "PUT", 429, "SubscriptionRequestsThrottled");
    await send(policy, "GET", 429, "ResourceRequestsThrottled");
    expect(rates(limiter)).toEqual({
      "arm:writes": { rate: 7, throttles: 1 },
      "network:writes": { rate: 3.333, throttles: 0 },
      "arm:reads": { rate: 25, throttles: 0 },
      "network:reads": { rate: 23.333, throttles: 1 },
    });
  });
});
