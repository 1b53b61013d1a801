// The AWS SDK clients Portico uses, with adaptive retries (client-side rate limiting when ELBv2 throttles),
// a count of every call by operation (for metrics and benchmarks), and errors classified for the controller.
import { ACMClient } from "@aws-sdk/client-acm";
import { EC2Client } from "@aws-sdk/client-ec2";
import { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import { ResourceGroupsTaggingAPIClient } from "@aws-sdk/client-resource-groups-tagging-api";
import type { FinalizeRequestMiddleware, MetadataBearer } from "@smithy/types";
import { CloudError } from "../errors.ts";

export interface AwsClientOptions {
  region?: string;
  /** Overrides AWS_ENDPOINT_URL (which the SDK reads by itself). */
  endpoint?: string;
  maxAttempts?: number;
}

export type CallObserver = (
  service: string,
  operation: string,
  outcome: "ok" | "error",
  code?: string,
) => void;

export interface AwsClients {
  acm: ACMClient;
  elbv2: ElasticLoadBalancingV2Client;
  ec2: EC2Client;
  tagging: ResourceGroupsTaggingAPIClient;
  /** Calls made so far, by "service:Operation". */
  calls: Map<string, number>;
  onCall(observer: CallObserver): void;
}

export function createAwsClients(opts: AwsClientOptions = {}): AwsClients {
  const config = {
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    retryMode: "adaptive",
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
      try {
        const out = await next(args);
        observers.forEach((o) => o(service, key, "ok"));
        return out;
      } catch (err) {
        observers.forEach((o) => o(service, key, "error", (err as Error).name));
        throw err;
      }
    };
  const placement = { step: "finalizeRequest", name: "porticoCallCounter", priority: "low" } as const;
  clients.acm.middlewareStack.add(counter("acm"), placement);
  clients.elbv2.middlewareStack.add(counter("elbv2"), placement);
  clients.ec2.middlewareStack.add(counter("ec2"), placement);
  clients.tagging.middlewareStack.add(counter("tagging"), placement);
  return { ...clients, calls, onCall: (o) => observers.push(o) };
}

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
export async function call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classify(operation, err);
  }
}
