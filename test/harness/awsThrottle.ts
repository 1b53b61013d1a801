// AWS's request throttling, emulated: a token bucket per API action and account, with the sizes and refill
// rates AWS documents for EC2, and conservative stated figures for ELBv2 and the tagging API, which publish
// none. The fault proxy (faultProxy.ts) asks `admit` before forwarding a request and answers a refused one
// exactly as the service does when it throttles, so the SDK's error parsing and retries see the real thing.
//
// EC2 (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html, "Request token bucket sizes
// and refill rates"): each API action has its own bucket, sized by the action's category — non-mutating
// (Describe*, List*, Search*, Get*) 100 tokens refilling 20/s; the unfiltered and unpaginated calls of
// DescribeInstances, DescribeSecurityGroups and five others 50/10 (a bucket of their own); mutating 50/5;
// resource-intensive (AuthorizeSecurityGroupIngress, RevokeSecurityGroupIngress, ...) 50/5; and the
// "uncategorized" actions listed with their own figures (CreateTags and DeleteTags 100/10, ...).
// Resource token buckets (RunInstances counts instances) are not emulated: Portico launches no instances.
//
// ELBv2 and the Resource Groups Tagging API publish no figures. The choice here is the AWS Load Balancer
// Controller's own client-side defaults (RegisterTargets/DeregisterTargets 20 tokens at 4/s, Describe* 40
// at 10/s, Modify* 20 at 3/s), extended conservatively to every other ELBv2 write (20 at 3/s), and 20 at 5/s
// for each tagging action. Refill is continuous (AWS says "every second"; a continuous refill is the
// kinder reading, so the floor computed from it is a true lower bound).

/** A bucket's documented shape: the burst it allows and the rate it sustains. */
export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

/** One token bucket, driven by the caller's clock (seconds), so its logic is pure and testable. */
export class TokenBucket {
  readonly spec: BucketSpec;
  private tokens: number;
  private at: number;

  constructor(spec: BucketSpec, now: number) {
    this.spec = spec;
    if (!(spec.capacity > 0) || !(spec.refillPerSecond > 0))
      throw new Error(
        `a token bucket needs a positive capacity and refill rate, got ${spec.capacity} and ${spec.refillPerSecond}`,
      );
    this.tokens = spec.capacity;
    this.at = now;
  }

  /** Tokens available at `now` (time never runs backwards here: an earlier `now` counts as the last one). */
  available(now: number): number {
    if (now > this.at) {
      this.tokens = Math.min(this.spec.capacity, this.tokens + (now - this.at) * this.spec.refillPerSecond);
      this.at = now;
    }
    return this.tokens;
  }

  /** Takes one token if there is a whole one; false means the request is throttled. */
  take(now: number): boolean {
    if (this.available(now) < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export type AwsApi = "ec2" | "elbv2" | "tagging" | "acm" | "other";

// Fixed-size buckets for EC2 actions Portico or its tests may call; the rest fall into their category.
const EC2_UNCATEGORIZED: Record<string, BucketSpec> = {
  CreateTags: { capacity: 100, refillPerSecond: 10 },
  DeleteTags: { capacity: 100, refillPerSecond: 10 },
  CreateNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  DeleteNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  ModifyNetworkInterfaceAttribute: { capacity: 100, refillPerSecond: 5 },
  AssignPrivateIpAddresses: { capacity: 100, refillPerSecond: 5 },
  AssignIpv6Addresses: { capacity: 100, refillPerSecond: 5 },
  DescribeSecurityGroupReferences: { capacity: 20, refillPerSecond: 5 },
  DescribeStaleSecurityGroups: { capacity: 20, refillPerSecond: 5 },
  CreateVpcEndpoint: { capacity: 4, refillPerSecond: 0.3 },
  DeleteVpcEndpoints: { capacity: 4, refillPerSecond: 0.3 },
};
const EC2_RESOURCE_INTENSIVE = new Set([
  "AcceptVpcPeeringConnection",
  "AuthorizeSecurityGroupIngress",
  "CancelSpotInstanceRequests",
  "CreateKeyPair",
  "CreateVpcPeeringConnection",
  "DeleteVpcPeeringConnection",
  "RejectVpcPeeringConnection",
  "RevokeSecurityGroupIngress",
  "RequestSpotInstances",
]);
const EC2_SMALLER_WHEN_UNFILTERED = new Set([
  "DescribeInstances",
  "DescribeInstanceStatus",
  "DescribeNetworkInterfaces",
  "DescribeSecurityGroups",
  "DescribeSnapshots",
  "DescribeSpotInstanceRequests",
  "DescribeVolumes",
]);
const NON_MUTATING = /^(Describe|List|Search|Get)/;

/** What a request is, as the throttle sees it. */
export interface ThrottledRequest {
  api: AwsApi;
  action: string;
  /** The caller's account; the access key ID stands for it, as moto and LocalStack treat it. */
  account: string;
  /** The query parameters (EC2 and ELBv2 speak the query protocol), to tell filtered calls apart. */
  params: URLSearchParams;
}

/** The bucket a request draws from: its name (unique per action within an API) and AWS's figures for it. */
export function bucketOf(req: Pick<ThrottledRequest, "api" | "action" | "params">): {
  name: string;
  category: string;
  spec: BucketSpec;
} {
  const { api, action } = req;
  const named = (category: string, capacity: number, refillPerSecond: number) => ({
    name: `${api}:${action}`,
    category,
    spec: { capacity, refillPerSecond },
  });
  if (api === "ec2") {
    const own = EC2_UNCATEGORIZED[action];
    if (own) return { name: `ec2:${action}`, category: "uncategorized", spec: own };
    if (EC2_RESOURCE_INTENSIVE.has(action)) return named("resource-intensive", 50, 5);
    if (EC2_SMALLER_WHEN_UNFILTERED.has(action) && !filteredOrPaginated(req.params))
      return { ...named("unfiltered-non-mutating", 50, 10), name: `ec2:${action}:unfiltered` };
    if (NON_MUTATING.test(action)) return named("non-mutating", 100, 20);
    return named("mutating", 50, 5);
  }
  if (api === "elbv2") {
    if (action === "RegisterTargets" || action === "DeregisterTargets") return named("targets", 20, 4);
    if (action.startsWith("Describe")) return named("describe", 40, 10);
    return named("write", 20, 3);
  }
  if (api === "tagging") return named("tagging", 20, 5);
  // ACM's certificate look-ups are rare (one per TLS Service); a generous bucket that never binds in tests.
  return named("other", 100, 20);
}

function filteredOrPaginated(params: URLSearchParams): boolean {
  for (const key of params.keys())
    if (key.startsWith("Filter.") || key === "MaxResults" || key === "NextToken") return true;
  return false;
}

export interface ThrottleOptions {
  /**
   * The share of every bucket the rest of the account uses (other controllers, consoles, scripts), 0..1:
   * Portico gets (1 - reserve) of each bucket's capacity and refill rate, as if the others drew steadily.
   */
  reserve?: number;
  /** Multiplies every capacity and refill rate, to make small tests meet the limits (default 1: AWS's figures). */
  scale?: number;
  /** Replaces the figures of some buckets, by bucket name ("ec2:DescribeInstances") or category ("ec2:mutating"). */
  overrides?: Record<string, BucketSpec>;
  /** The clock, in seconds. */
  now?: () => number;
}

/** Reads the throttle's settings from the environment; undefined when PORTICO_AWS_THROTTLE is not set on. */
export function throttleOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ThrottleOptions | undefined {
  const on = env.PORTICO_AWS_THROTTLE;
  if (!on || on === "0" || on === "off" || on === "false") return undefined;
  const number = (key: string, min: number, max: number): number | undefined => {
    const raw = env[key];
    if (raw === undefined || raw === "") return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new Error(`${key}=${raw} is not a number from ${min} to ${max}`);
    return n;
  };
  const reserve = number("PORTICO_AWS_THROTTLE_RESERVE", 0, 0.99);
  const scale = number("PORTICO_AWS_THROTTLE_SCALE", 0.001, 1000);
  return { ...(reserve !== undefined ? { reserve } : {}), ...(scale !== undefined ? { scale } : {}) };
}

/** Per bucket: calls let through and calls throttled, since the last reset. */
export interface BucketCount {
  api: AwsApi;
  category: string;
  spec: BucketSpec;
  admitted: number;
  throttled: number;
}

export class AwsThrottle {
  private readonly buckets = new Map<string, TokenBucket>();
  readonly counts = new Map<string, BucketCount>();
  private readonly now: () => number;
  private readonly share: number;
  private readonly scale: number;
  private readonly opts: ThrottleOptions;

  constructor(opts: ThrottleOptions = {}) {
    this.opts = opts;
    const reserve = opts.reserve ?? 0;
    if (!(reserve >= 0 && reserve < 1))
      throw new Error(`the reserve must be from 0 to below 1, got ${reserve}`);
    this.share = 1 - reserve;
    this.scale = opts.scale ?? 1;
    if (!(this.scale > 0)) throw new Error(`the scale must be positive, got ${this.scale}`);
    this.now = opts.now ?? (() => performance.now() / 1000);
  }

  /** The figures Portico's share of a bucket has: AWS's (or an override), scaled, less the reserve. */
  specOf(req: Pick<ThrottledRequest, "api" | "action" | "params">): {
    name: string;
    category: string;
    spec: BucketSpec;
  } {
    const b = bucketOf(req);
    const base = this.opts.overrides?.[b.name] ?? this.opts.overrides?.[`${req.api}:${b.category}`] ?? b.spec;
    const k = this.scale * this.share;
    return {
      ...b,
      spec: { capacity: Math.max(1, base.capacity * k), refillPerSecond: base.refillPerSecond * k },
    };
  }

  /** Whether the request may go through now; each admitted request takes one token from its bucket. */
  admit(req: ThrottledRequest): boolean {
    const { name, category, spec } = this.specOf(req);
    const key = `${req.account}/${name}`;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new TokenBucket(spec, this.now())));
    const ok = bucket.take(this.now());
    let count = this.counts.get(name);
    if (!count) this.counts.set(name, (count = { api: req.api, category, spec, admitted: 0, throttled: 0 }));
    if (ok) count.admitted++;
    else count.throttled++;
    return ok;
  }

  /** Full buckets and zero counts again, e.g. at the start of a measured phase. */
  reset(): void {
    this.buckets.clear();
    this.counts.clear();
  }

  throttled(): number {
    return [...this.counts.values()].reduce((n, c) => n + c.throttled, 0);
  }

  /**
   * The least time the admitted calls could have taken, starting from full buckets: for each bucket, the
   * calls beyond its burst divided by its refill rate; the slowest bucket bounds the whole.
   */
  floor(): { seconds: number; bucket: string | undefined } {
    return floorOf(this.counts);
  }
}

export function floorOf(counts: Map<string, Pick<BucketCount, "spec" | "admitted">>): {
  seconds: number;
  bucket: string | undefined;
} {
  let worst: { seconds: number; bucket: string | undefined } = { seconds: 0, bucket: undefined };
  for (const [name, c] of counts) {
    const seconds = Math.max(0, c.admitted - c.spec.capacity) / c.spec.refillPerSecond;
    if (seconds > worst.seconds) worst = { seconds, bucket: name };
  }
  return worst;
}

/** How the service answers a throttled request: status, headers and body in its own error shape. */
export function throttleAnswer(
  api: AwsApi,
  requestId: string,
): { status: number; headers: Record<string, string>; body: string } {
  const headers = { "x-amzn-requestid": requestId };
  if (api === "ec2")
    // EC2's query protocol: <Response><Errors>..., and 503 for RequestLimitExceeded.
    return {
      status: 503,
      headers: { ...headers, "content-type": "text/xml;charset=UTF-8" },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`,
    };
  if (api === "tagging" || api === "acm")
    // The JSON protocol's error shape (both speak it).
    return {
      status: 400,
      headers: { ...headers, "content-type": "application/x-amz-json-1.1" },
      body: JSON.stringify({ __type: "ThrottlingException", Message: "Rate exceeded" }),
    };
  // ELBv2: the AWS query protocol's ErrorResponse.
  return {
    status: 400,
    headers: { ...headers, "content-type": "text/xml" },
    body: `<ErrorResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  };
}

/** The API and account of a signed request, from its SigV4 credential scope (AKID/date/region/service/...). */
export function signerOf(authorization: string | undefined): { api: AwsApi; account: string } {
  const m = /Credential=([^/,\s]+)\/[^/]+\/[^/]+\/([^/]+)\//.exec(authorization ?? "");
  const service = m?.[2] ?? "";
  const api: AwsApi =
    service === "ec2"
      ? "ec2"
      : service === "elasticloadbalancing"
        ? "elbv2"
        : service === "tagging"
          ? "tagging"
          : service === "acm"
            ? "acm"
            : "other";
  return { api, account: m?.[1] ?? "anonymous" };
}
