// The ARM client Portico uses: the real @azure/arm-network client with its own retry policy (which honours
// Retry-After on 429 and 5xx), a client-side rate limiter shared by every reconcile that keeps Portico under
// ARM's and Microsoft.Network's request limits (rateLimit.ts), a count of every request by operation (for
// metrics and benchmarks), and ARM's errors classified for the controller.
import { NetworkManagementClient } from "@azure/arm-network";
import type { TokenCredential } from "@azure/identity";
import { CloudError } from "../../errors.ts";
import { RateLimiter, track, type RateLimiterOptions } from "../../rateLimit.ts";
import { limitsOf, rateLimiterOptionsFromEnv, throttledLimit } from "./rateLimit.ts";

/** A policy of the client's HTTP pipeline (the type of @azure/core-rest-pipeline, which is not imported directly). */
type PipelinePolicy = Parameters<NetworkManagementClient["pipeline"]["addPolicy"]>[0];

export type CallObserver = (
  operation: string,
  outcome: "ok" | "error",
  code: string | undefined,
  /** How long ARM took to answer (the rate limiter's wait is not in it). */
  seconds: number,
) => void;

export interface AzureClients {
  network: NetworkManagementClient;
  /** Requests made so far, retries included, by "METHOD type" ("PUT loadBalancers", "GET operations"). */
  calls: Map<string, number>;
  onCall(observer: CallObserver): void;
  /** Poll interval of long-running operations when ARM sends no Retry-After. */
  pollIntervalMs: number;
  /** The rate limiter every request goes through, when there is one. */
  limiter: RateLimiter | undefined;
}

export interface AzureClientOptions {
  credential: TokenCredential;
  subscriptionId: string;
  endpoint?: string;
  maxRetries?: number;
  pollIntervalMs?: number;
  /**
   * The client-side rate limiter: its options, or false for none. By default from the environment: on, unless
   * PORTICO_AZURE_RATE_LIMIT=off; PORTICO_AZURE_RATE_SHARE starts it at a share of Azure's figures.
   */
  rateLimit?: RateLimiterOptions | false;
}

/** Sovereign clouds' ARM hosts, whose tokens need their own audience; any other endpoint takes the public one. */
const SOVEREIGN_AUDIENCES: Record<string, string> = {
  "management.usgovcloudapi.net": "https://management.usgovcloudapi.net/.default",
  "management.chinacloudapi.cn": "https://management.chinacloudapi.cn/.default",
};

export function createAzureClients(opts: AzureClientOptions): AzureClients {
  const audience = opts.endpoint ? SOVEREIGN_AUDIENCES[new URL(opts.endpoint).hostname] : undefined;
  const network = new NetworkManagementClient(opts.credential, opts.subscriptionId, {
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(audience ? { credentials: { scopes: [audience] } } : {}),
    retryOptions: { maxRetries: opts.maxRetries ?? 3 },
  });
  const limiterOptions =
    opts.rateLimit === undefined ? rateLimiterOptionsFromEnv() : opts.rateLimit || undefined;
  const limiter = limiterOptions ? track(new RateLimiter(limiterOptions)) : undefined;
  const calls = new Map<string, number>();
  const observers: CallObserver[] = [];
  network.pipeline.addPolicy(retryAfterGate(), { afterPhase: "Retry" });
  // After the retry policy and before signing: every attempt waits for its turn, and a long wait never sends a
  // stale token.
  if (limiter) network.pipeline.addPolicy(rateLimitPolicy(limiter), { afterPhase: "Retry" });
  // After the retry policy: every attempt is a request ARM's rate limits see.
  network.pipeline.addPolicy(
    {
      name: "porticoCallCounter",
      async sendRequest(request, next) {
        const key = operationLabel(request.method, request.url);
        calls.set(key, (calls.get(key) ?? 0) + 1);
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        try {
          const response = await next(request);
          const failed = response.status >= 400;
          // A 429 is told by its code: ARM's throttling, or a resource provider's "busy, try again".
          const code = response.status === 429 ? (errorCode(response) ?? "429") : String(response.status);
          observers.forEach((o) => o(key, failed ? "error" : "ok", failed ? code : undefined, seconds()));
          return response;
        } catch (err) {
          observers.forEach((o) => o(key, "error", (err as { code?: string }).code, seconds()));
          throw err;
        }
      },
    },
    { afterPhase: "Retry" },
  );
  return {
    network,
    calls,
    onCall: (o) => observers.push(o),
    pollIntervalMs: opts.pollIntervalMs ?? 2000,
    limiter,
  };
}

/**
 * Holds every request for as long as a throttled answer to the same request (method and path) asked, not only
 * the retry of the one that got it: ARM's throttling concerns the subscription, so another reconcile's identical
 * read sent meanwhile would only be refused again and keep the throttling going. Runs on every attempt, after the
 * retry policy, which waits out the Retry-After of its own request.
 */
export function retryAfterGate(now: () => number = () => performance.now()): PipelinePolicy {
  const notBefore = new Map<string, number>();
  return {
    name: "porticoRetryAfterGate",
    async sendRequest(request, next) {
      const key = `${request.method} ${new URL(request.url).pathname.toLowerCase()}`;
      for (let wait = (notBefore.get(key) ?? 0) - now(); wait > 0; wait = (notBefore.get(key) ?? 0) - now())
        await new Promise((resolve) => setTimeout(resolve, wait));
      const response = await next(request);
      const seconds = Number(response.headers.get("retry-after"));
      if ((response.status === 429 || response.status === 503) && seconds > 0) {
        const t = now();
        for (const [k, until] of notBefore) if (until <= t) notBefore.delete(k);
        notBefore.set(key, Math.max(notBefore.get(key) ?? 0, t + seconds * 1000));
      }
      return response;
    },
  };
}

/**
 * Waits for the request's turn on each limit it counts against (ARM's bucket for its type, Microsoft.Network's
 * window), users' changes first, and tells the limiter how ARM answered: a throttle of one of them, or a request
 * that got through. A request that got no answer teaches nothing.
 */
export function rateLimitPolicy(limiter: RateLimiter): PipelinePolicy {
  return {
    name: "porticoRateLimiter",
    async sendRequest(request, next) {
      const limits = limitsOf(request.method, request.url);
      for (const { bucket, limit } of limits) await limiter.acquire(bucket, limit);
      const response = await next(request);
      const buckets = limits.map((l) => l.bucket);
      if (response.status !== 429) buckets.forEach((b) => limiter.succeeded(b));
      else {
        const throttled = throttledLimit(errorCode(response), buckets);
        if (throttled) limiter.throttled(throttled);
      }
      // ARM says what remains of the principal's bucket and of the subscription's: no more is held than either.
      const type = buckets[0]!.slice("arm:".length);
      const left = ["", "global-"]
        .map((scope) => response.headers.get(`x-ms-ratelimit-remaining-subscription-${scope}${type}`))
        .filter((h) => h !== undefined && /^\d+$/.test(h.trim()))
        .map(Number);
      if (left.length) limiter.remaining(buckets[0]!, Math.min(...left));
      return response;
    },
  };
}

/** ARM's error code in an answer's body, when it has one. */
function errorCode(response: { bodyAsText?: string | null }): string | undefined {
  try {
    const code = (JSON.parse(response.bodyAsText ?? "") as { error?: { code?: unknown } }).error?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/** "PUT loadBalancers", "GET operations", "DELETE publicIPAddresses"... */
export function operationLabel(method: string, url: string): string {
  const path = new URL(url).pathname;
  const m = path.match(/\/providers\/Microsoft\.Network\/(.+)$/i);
  if (!m) return `${method} other`;
  const segments = m[1]!.split("/");
  if (segments[0] === "locations")
    return `${method} ${segments[2] === "operationResults" ? "operationResults" : "operations"}`;
  const child = segments[2];
  // A child's action: loadBalancers/{lb}/loadBalancingRules/{rule}/health.
  if (segments.length === 5) return `${method} ${segments[0]}/${child}/${segments[4]}`;
  return `${method} ${segments[0]}${child ? `/${child}` : ""}${segments.length % 2 === 1 ? " (list)" : ""}`;
}

/** ARM answers that a retry, after a while, can fix. */
const RETRYABLE_CODES = new Set([
  "AnotherOperationInProgress",
  "RetryableError",
  "ReferencedResourceNotProvisioned",
  "PreconditionFailed",
  "PublicIPAddressCannotBeDeleted",
  "InUseSubnetCannotBeDeleted",
  "CanceledAndSupersededDueToAnotherOperation",
  "SubscriptionRequestsThrottled",
  "TooManyRequests",
  "InternalServerError",
  "GatewayTimeout",
  "OperationCanceled",
  "LongRunningOperationFailed",
]);

export interface ArmErrorInfo {
  status: number | undefined;
  code: string;
  message: string;
  retryAfterMs?: number;
}

/** What an SDK error says, whether it came from a response (RestError) or from a failed long-running operation. */
export function armError(err: unknown): ArmErrorInfo {
  const e = err as {
    name?: string;
    code?: string;
    statusCode?: number;
    message?: string;
    response?: { headers?: { get?(name: string): string | undefined } };
  };
  const message = e.message ?? String(err);
  // core-lro reports a failed operation as "The long-running operation has failed. <code>. <message>".
  const lro = message.match(/^The long-running operation has failed\. ([A-Za-z]+)\. /);
  const canceled = /operation was canceled/i.test(message);
  const code =
    e.code && e.name === "RestError"
      ? e.code
      : (lro?.[1] ??
        (canceled
          ? "OperationCanceled"
          : message.startsWith("The long-running")
            ? "LongRunningOperationFailed"
            : (e.code ?? e.name ?? "Error")));
  const retryAfter = Number(e.response?.headers?.get?.("retry-after"));
  return {
    status: e.statusCode,
    code,
    message,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
  };
}

/** Wraps an SDK error as a CloudError naming the operation, with whether a retry can help. */
export function classify(operation: string, err: unknown): CloudError {
  if (err instanceof CloudError) return err;
  const info = armError(err);
  const status = info.status ?? 0;
  return new CloudError({
    operation,
    code: info.code,
    message: info.message.split("\n")[0]!,
    retryable:
      status === 0 ||
      status === 409 ||
      status === 412 ||
      status === 429 ||
      status >= 500 ||
      RETRYABLE_CODES.has(info.code),
    ...(info.retryAfterMs ? { retryAfterMs: info.retryAfterMs } : {}),
  });
}

/** Runs one ARM call and classifies its failure. */
export async function call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classify(operation, err);
  }
}

export function isNotFound(err: unknown): boolean {
  if (err instanceof CloudError) return /NotFound$/.test(err.code);
  const info = armError(err);
  return info.status === 404 || /NotFound$/.test(info.code);
}
