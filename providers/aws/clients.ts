// The AWS SDK clients Portico uses, with a client-side rate limiter shared by all of them (providers/rateLimit.ts,
// per AWS bucket as rateLimiter.ts names them: learning the account's share from throttles, user work before
// background work), a count of every call by operation (for metrics and benchmarks), and errors classified for
// the controller.
import { ACMClient } from "@aws-sdk/client-acm";
import { EC2Client } from "@aws-sdk/client-ec2";
import { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import type { FinalizeRequestMiddleware, MetadataBearer } from "@smithy/types";
import { CloudError } from "../errors.ts";
import { RateLimiter, track, type RateLimiterOptions } from "../rateLimit.ts";
import { limitOf, rateLimiterOptionsFromEnv } from "./rateLimiter.ts";

export interface AwsClientOptions {
  region?: string;
  /** Overrides AWS_ENDPOINT_URL (which the SDK reads by itself). */
  endpoint?: string;
  maxAttempts?: number;
  /**
   * The client-side rate limiter: its options, or false for none. By default from the environment: on,
   * unless PORTICO_AWS_RATE_LIMIT=off; PORTICO_AWS_RATE_SHARE starts it at a share of AWS's figures.
   */
  rateLimit?: RateLimiterOptions | false;
}

export type CallObserver = (
  service: string,
  operation: string,
  outcome: "ok" | "error",
  code: string | undefined,
  /** How long the cloud took to answer (the rate limiter's wait is not in it). */
  seconds: number,
) => void;

export interface AwsClients {
  acm: ACMClient;
  elbv2: ElasticLoadBalancingV2Client;
  ec2: EC2Client;
  tagging: ResourceGroupsTaggingAPIClient;
  /** Calls made so far, by "service:Operation". */
  calls: Map<string, number>;
  onCall(observer: CallObserver): void;
  /** The rate limiter every call goes through, when there is one. */
  limiter: RateLimiter | undefined;
}

export function createAwsClients(opts: AwsClientOptions = {}): AwsClients {
  const limiterOptions =
    opts.rateLimit === undefined ? rateLimiterOptionsFromEnv() : opts.rateLimit || undefined;
  const limiter = limiterOptions ? track(new RateLimiter(limiterOptions)) : undefined;
  const config = {
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    // The SDK's adaptive mode limits a whole client at once (one ELBv2 bucket throttled would slow every
    // ELBv2 call); with Portico's own limiter, per bucket, the standard retries are the ones wanted.
    retryMode: limiter ? "standard" : "adaptive",
    maxAttempts: opts.maxAttempts ?? 6,
  };
  const calls = new Map<string, number>();
  const observers: CallObserver[] = [];
  const clients = {
    acm: new ACMClient(config),
    elbv2: new ElasticLoadBalancingV2Client(config),
    ec2: new EC2Client(config),
    tagging: new ResourceGroupsTaggingAPIClient(config),
  };
  // Each attempt, retries included, is a call the account's rate limits see.
  const counter =
    (service: string): FinalizeRequestMiddleware<object, MetadataBearer> =>
    (next, context) =>
    async (args) => {
      const key = `${service}:${String(context.commandName).replace(/Command$/, "")}`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const out = await next(args);
        observers.forEach((o) => o(service, key, "ok", undefined, seconds()));
        return out;
      } catch (err) {
        observers.forEach((o) => o(service, key, "error", (err as Error).name, seconds()));
        throw err;
      }
    };
  // Each attempt, retries included, waits for its bucket, and tells the limiter how the account answered.
  // It waits before the request is signed, so a long wait never sends a stale signature.
  const limit =
    (service: string): FinalizeRequestMiddleware<object, MetadataBearer> =>
    (next, context) =>
    async (args) => {
      const { bucket, limit } = limitOf(
        service,
        String(context.commandName).replace(/Command$/, ""),
        args.input,
      );
      await limiter!.acquire(bucket, limit);
      try {
        const out = await next(args);
        limiter!.succeeded(bucket);
        return out;
      } catch (err) {
        if (THROTTLE_CODES.has((err as Error).name)) limiter!.throttled(bucket);
        throw err;
      }
    };
  const placement = { step: "finalizeRequest", name: "porticoCallCounter", priority: "low" } as const;
  const beforeSigning = {
    name: "porticoRateLimiter",
    relation: "before",
    toMiddleware: "httpSigningMiddleware",
  } as const;
  clients.acm.middlewareStack.add(counter("acm"), placement);
  clients.elbv2.middlewareStack.add(counter("elbv2"), placement);
  clients.ec2.middlewareStack.add(counter("ec2"), placement);
  clients.tagging.middlewareStack.add(counter("tagging"), placement);
  if (limiter) {
    clients.acm.middlewareStack.addRelativeTo(limit("acm"), beforeSigning);
    clients.elbv2.middlewareStack.addRelativeTo(limit("elbv2"), beforeSigning);
    clients.ec2.middlewareStack.addRelativeTo(limit("ec2"), beforeSigning);
    clients.tagging.middlewareStack.addRelativeTo(limit("tagging"), beforeSigning);
  }
  return { ...clients, calls, onCall: (o) => observers.push(o), limiter };
}

const THROTTLE_CODES = new Set([
  "Throttling",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "RequestThrottled",
  "RequestThrottledException",
]);

const RETRYABLE_CODES = new Set([
  "Throttling",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "ResourceInUse",
  "ResourceInUseException",
  "DependencyViolation",
  "OperationNotPermitted",
  "IncorrectState",
  "ServiceUnavailable",
  "InternalFailure",
  "InternalError",
]);

/** Wraps an SDK error as a CloudError naming the operation, with whether a retry can help. */
export function classify(operation: string, err: unknown): CloudError {
  if (err instanceof CloudError) return err;
  const e = err as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    $retryable?: unknown;
    $response?: { headers?: Record<string, string> };
  };
  const code = (e.name ?? "Error").replace(/Exception$/, "");
  const status = e.$metadata?.httpStatusCode ?? 0;
  const retryAfter = Number(e.$response?.headers?.["retry-after"]);
  return new CloudError({
    operation,
    code,
    message: e.message ?? String(err),
    retryable:
      status >= 500 ||
      status === 429 ||
      RETRYABLE_CODES.has(code) ||
      RETRYABLE_CODES.has(e.name ?? "") ||
      !status,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
  });
}

/** Runs one SDK call and classifies its failure. */
/**
 * Every page of a paged read, from the SDK's own paginator (its tokens, its stop), each page handed to `take`; an
 * error on any page classified as `call` does. Answers how many pages were read (what the read cost).
 */
export async function eachPage<P>(
  operation: string,
  pages: AsyncIterable<P>,
  take: (page: P) => void,
): Promise<number> {
  let count = 0;
  try {
    for await (const page of pages) {
      count++;
      take(page);
    }
  } catch (err) {
    throw classify(operation, err);
  }
  return count;
}

export async function call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classify(operation, err);
  }
}
