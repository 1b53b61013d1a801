// Azure Resource Manager's request throttling, emulated: what ARM and the Microsoft.Network resource provider
// (NRP) do when a subscription sends more than they allow. Off unless switched on (POST /_emulator/throttling),
// so every other use of the emulator answers as fast as it can.
//
// ARM (https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling,
// "Regional throttling and token bucket algorithm", the architecture every subscription runs on since 2024):
// token buckets per subscription, per service principal and per operation type — reads 250 tokens refilling
// 25/s, writes 200 refilling 10/s, deletes 200 refilling 10/s — and, across every principal of the
// subscription, a global bucket per operation type 15 times the principal's. A request is throttled when either
// is empty. Refill is continuous here (the kinder reading, so the floor computed from it is a true lower
// bound). Tenant-level limits are not emulated: Portico makes no tenant-level request.
//
// NRP ("Network throttling", same page): 1000 writes and deletes (PUT and DELETE, together) and 10000 reads per
// 5 minutes, per subscription (per region of the resource: the emulator's resources live in one region). The page
// says "per 5 minutes" and no more; this is a sliding window (at most that many in any 5 minutes), the stricter
// reading, since a fixed window would let twice as many through across its boundary. A request ARM admits
// takes ARM's tokens even when NRP then refuses it, as ARM has forwarded it by then.
//
// A refused request is answered as ARM answers: 429 with Retry-After (whole seconds) and ARM's code,
// `SubscriptionRequestsThrottled` with its message on public record; NRP's own code is not documented, so NRP
// answers `ResourceRequestsThrottled`, the code and message shape ARM uses for resource providers' limits it
// enforces (Microsoft.Cdn's, Microsoft.Authorization's). Every answer to an ARM request carries the remaining
// reads, writes or deletes (its operation type's) of the principal's bucket and of the global one, in ARM's
// headers. Long-running operations' status polls are reads, to ARM and to NRP alike.
import { floorOf, TokenBucket, type BucketSpec } from "../../harness/awsThrottle.ts";
import type { ArmError } from "./errors.ts";
import { resourceRequestsThrottled, throttled } from "./errors.ts";

export type OperationType = "reads" | "writes" | "deletes";

export const ARM_BUCKETS: Record<OperationType, BucketSpec> = {
  reads: { capacity: 250, refillPerSecond: 25 },
  writes: { capacity: 200, refillPerSecond: 10 },
  deletes: { capacity: 200, refillPerSecond: 10 },
};
/** The subscription's global limit, over every principal, is this many times one principal's. */
export const GLOBAL_FACTOR = 15;

/** At most `limit` requests in any `windowSeconds`. */
export interface WindowSpec {
  limit: number;
  windowSeconds: number;
}

export const NETWORK_WINDOWS: Record<"reads" | "writes", WindowSpec> = {
  reads: { limit: 10000, windowSeconds: 300 },
  writes: { limit: 1000, windowSeconds: 300 },
};

export function operationType(method: string): OperationType {
  const m = method.toUpperCase();
  return m === "GET" || m === "HEAD" ? "reads" : m === "DELETE" ? "deletes" : "writes";
}

/** A sliding window over the caller's clock (seconds): the times of the requests it let through. */
export class SlidingWindow {
  readonly spec: WindowSpec;
  private readonly times: number[] = [];
  private head = 0;

  constructor(spec: WindowSpec) {
    if (!(spec.limit >= 1) || !(spec.windowSeconds > 0))
      throw new Error(
        `a window needs a limit of at least 1 and a positive length, got ${JSON.stringify(spec)}`,
      );
    this.spec = spec;
  }

  remaining(now: number): number {
    while (this.head < this.times.length && this.times[this.head]! <= now - this.spec.windowSeconds)
      this.head++;
    if (this.head > 4096 && this.head * 2 > this.times.length) {
      this.times.splice(0, this.head);
      this.head = 0;
    }
    return Math.floor(this.spec.limit) - (this.times.length - this.head);
  }

  take(now: number): boolean {
    if (this.remaining(now) < 1) return false;
    this.times.push(now);
    return true;
  }

  /** Seconds until one more request fits. */
  wait(now: number): number {
    const left = this.remaining(now);
    return left >= 1 ? 0 : this.times[this.head - left]! + this.spec.windowSeconds - now;
  }
}

export interface ThrottlingOptions {
  /**
   * The share of every limit the rest of the account uses (other principals, portals, scripts, and on AKS the
   * cluster's own identity shared with other controllers), 0..1: Portico gets the rest, as if the others drew
   * steadily on every bucket and window.
   */
  reserve?: number;
  /** Multiplies every bucket's burst and rate, and every window's count (default 1: Azure's figures). */
  scale?: number;
  /**
   * Replaces the figures of some limits, by name: "principal:reads" (a bucket, per principal), "global:writes"
   * (a bucket, the subscription's), "network:writes" (a window: { limit, windowSeconds }).
   */
  overrides?: Record<string, BucketSpec | WindowSpec>;
  /** The clock, in seconds. */
  now?: () => number;
}

export interface LimitCount {
  kind: "bucket" | "window";
  spec: BucketSpec | WindowSpec;
  admitted: number;
  throttled: number;
}

export interface ThrottledRequest {
  method: string;
  path: string;
  subscriptionId: string;
  /** The caller's service principal (its token's object or app id). */
  principal: string;
  /** "Microsoft.Network/loadBalancers" for NRP's requests; undefined for others (resource groups). */
  networkType: string | undefined;
}

export type Verdict = { headers: Record<string, string>; refusal?: ArmError };

export class ArmThrottling {
  readonly options: Omit<ThrottlingOptions, "now">;
  /** Per limit name ("principal:reads", "network:writes"...): requests let through and refused, since the start. */
  readonly counts = new Map<string, LimitCount>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly windows = new Map<string, SlidingWindow>();
  private readonly now: () => number;
  private readonly factor: number;
  private refused = 0;

  constructor(opts: ThrottlingOptions = {}) {
    const { now, ...options } = opts;
    const reserve = opts.reserve ?? 0;
    if (!(reserve >= 0 && reserve < 1))
      throw new Error(`"reserve" must be from 0 to below 1, got ${reserve}`);
    const scale = opts.scale ?? 1;
    if (!(scale > 0)) throw new Error(`"scale" must be positive, got ${scale}`);
    for (const [name, spec] of Object.entries(opts.overrides ?? {})) {
      const window = name.startsWith("network:");
      if (!/^(principal|global):(reads|writes|deletes)$|^network:(reads|writes)$/.test(name))
        throw new Error(
          `no limit "${name}": principal:<type> and global:<type> (reads, writes, deletes), network:reads, network:writes`,
        );
      const ok = window
        ? (spec as WindowSpec).limit >= 1 && (spec as WindowSpec).windowSeconds > 0
        : (spec as BucketSpec).capacity > 0 && (spec as BucketSpec).refillPerSecond > 0;
      if (!ok)
        throw new Error(
          `"${name}" needs ${window ? "{ limit ≥ 1, windowSeconds > 0 }" : "{ capacity > 0, refillPerSecond > 0 }"}`,
        );
    }
    this.options = options;
    this.factor = scale * (1 - reserve);
    this.now = now ?? (() => performance.now() / 1000);
  }

  /** Portico's share of a bucket: Azure's figure (or the override), scaled, less the reserve. */
  bucketSpec(name: string): BucketSpec {
    const [scope, type] = name.split(":") as ["principal" | "global", OperationType];
    const base = ARM_BUCKETS[type];
    const documented = scope === "global" ? scaled(base, GLOBAL_FACTOR) : base;
    const spec = (this.options.overrides?.[name] as BucketSpec | undefined) ?? documented;
    return {
      capacity: Math.max(1, spec.capacity * this.factor),
      refillPerSecond: spec.refillPerSecond * this.factor,
    };
  }

  windowSpec(name: string): WindowSpec {
    const type = name.split(":")[1] as "reads" | "writes";
    const spec = (this.options.overrides?.[name] as WindowSpec | undefined) ?? NETWORK_WINDOWS[type];
    return { limit: Math.max(1, Math.floor(spec.limit * this.factor)), windowSeconds: spec.windowSeconds };
  }

  /** Whether ARM and NRP let the request through now (taking its tokens), and the headers its answer carries. */
  admit(req: ThrottledRequest): Verdict {
    const now = this.now();
    const type = operationType(req.method);
    const principal = this.bucket(`principal:${type}`, `${req.subscriptionId}/${req.principal}`, now);
    const global = this.bucket(`global:${type}`, req.subscriptionId, now);
    const arm = principal.bucket.available(now) >= 1 && global.bucket.available(now) >= 1;
    if (arm) {
      principal.bucket.take(now);
      global.bucket.take(now);
    }
    // A refusal is counted against the bucket that was empty (both, when both were).
    for (const b of [principal, global])
      if (arm || b.bucket.available(now) < 1) this.count(b.name, "bucket", b.bucket.spec, arm);
    if (!arm) this.refused++;
    const headers = {
      [`x-ms-ratelimit-remaining-subscription-${type}`]: String(Math.floor(principal.bucket.available(now))),
      [`x-ms-ratelimit-remaining-subscription-global-${type}`]: String(
        Math.floor(global.bucket.available(now)),
      ),
    };
    if (!arm) {
      const short = [principal.bucket, global.bucket].map(
        (b) => (1 - b.available(now)) / b.spec.refillPerSecond,
      );
      const retryAfter = Math.max(1, Math.ceil(Math.max(...short)));
      return {
        headers,
        refusal: throttled(req.subscriptionId, `${req.method}${req.path.toUpperCase()}`, retryAfter),
      };
    }
    if (!req.networkType) return { headers };
    const name = `network:${type === "reads" ? "reads" : "writes"}`;
    const key = `${name}/${req.subscriptionId}`;
    let window = this.windows.get(key);
    if (!window) this.windows.set(key, (window = new SlidingWindow(this.windowSpec(name))));
    const ok = window.take(now);
    this.count(name, "window", window.spec, ok);
    if (ok) return { headers };
    this.refused++;
    const action = `${req.networkType}/${type === "reads" ? "read" : type === "writes" ? "write" : "delete"}`;
    const retryAfter = Math.max(1, Math.ceil(window.wait(now)));
    return { headers, refusal: resourceRequestsThrottled(action, window.spec, retryAfter) };
  }

  /** Requests refused, since the start. */
  throttled(): number {
    return this.refused;
  }

  /**
   * The least time the admitted requests could have taken, starting from full buckets and empty windows: for a
   * bucket, the requests beyond its burst over its refill rate; for a window, a window's length for each whole
   * window's worth of requests beyond the first. The slowest limit bounds the whole.
   */
  floor(): { seconds: number; limit: string | undefined } {
    const buckets = new Map(
      [...this.counts].flatMap(([n, c]) =>
        c.kind === "bucket" ? [[n, { ...c, spec: c.spec as BucketSpec }]] : [],
      ),
    );
    const worst = floorOf(buckets);
    let out = { seconds: worst.seconds, limit: worst.bucket };
    for (const [name, c] of this.counts) {
      if (c.kind !== "window" || c.admitted === 0) continue;
      const spec = c.spec as WindowSpec;
      const seconds = Math.floor((c.admitted - 1) / spec.limit) * spec.windowSeconds;
      if (seconds > out.seconds) out = { seconds, limit: name };
    }
    return out;
  }

  describe(): Record<string, unknown> {
    return {
      enabled: true,
      ...this.options,
      limits: Object.fromEntries([...this.counts].map(([n, c]) => [n, c])),
      throttled: this.throttled(),
      floor: this.floor(),
    };
  }

  private bucket(name: string, scope: string, now: number): { name: string; bucket: TokenBucket } {
    const key = `${name}/${scope}`;
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new TokenBucket(this.bucketSpec(name), now)));
    return { name, bucket };
  }

  private count(name: string, kind: LimitCount["kind"], spec: LimitCount["spec"], admitted: boolean): void {
    let c = this.counts.get(name);
    if (!c) this.counts.set(name, (c = { kind, spec, admitted: 0, throttled: 0 }));
    if (admitted) c.admitted++;
    else c.throttled++;
  }
}

function scaled(spec: BucketSpec, k: number): BucketSpec {
  return { capacity: spec.capacity * k, refillPerSecond: spec.refillPerSecond * k };
}

/** The settings of POST /_emulator/throttling, checked. */
export function validateThrottling(input: unknown): Omit<ThrottlingOptions, "now"> {
  const c = (input ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(c))
    if (!["reserve", "scale", "overrides"].includes(key))
      throw new Error(`unknown throttling setting "${key}": reserve, scale, overrides`);
  const number = (k: string) => {
    if (c[k] === undefined) return undefined;
    if (typeof c[k] !== "number") throw new Error(`"${k}" must be a number`);
    return c[k];
  };
  const reserve = number("reserve");
  const scale = number("scale");
  if (c.overrides !== undefined && (typeof c.overrides !== "object" || c.overrides === null))
    throw new Error('"overrides" must be an object of limit names and figures');
  const options = {
    ...(reserve !== undefined ? { reserve } : {}),
    ...(scale !== undefined ? { scale } : {}),
    ...(c.overrides ? { overrides: c.overrides as Record<string, BucketSpec | WindowSpec> } : {}),
  };
  new ArmThrottling(options); // checks the figures
  return options;
}
