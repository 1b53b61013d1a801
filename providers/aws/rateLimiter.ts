// Client-side rate limiting for the AWS APIs, so that Portico stays under the account's request buckets
// instead of bouncing off them: one limiter per AwsClients, shared by every worker, with a token bucket per
// bucket AWS keeps. EC2 throttles each API action on its own bucket, sized by the action's category
// (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html); the limiter mirrors that
// grouping. ELBv2 and the tagging API publish no figures: the defaults are the AWS Load Balancer
// Controller's client-side limits, and conservative figures of the same order for the rest.
//
// The documented figures are the whole account's; other software on the account draws from the same
// buckets, so the limiter learns Portico's share from throttled answers: a throttle cuts the bucket's
// rate (and burst) to 70% and empties it, successes raise the rate again additively — quickly up to 90% of the
// rate that was last throttled, then slowly up to 97% of it; that ceiling rises by 10% after each five
// minutes without a throttle, so a learned rate is probed rarely and the share others give back is retaken.
//
// Calls carry a priority (`withPriority`): a change a user waits for ("user", the default) goes before
// background work (resync) queued on the same bucket, which waits while user work is queued.
import { currentPriority, withPriority, type Priority } from "../priority.ts";

export { currentPriority, withPriority, type Priority };

export interface Limit {
  capacity: number;
  refillPerSecond: number;
}

const EC2_OWN: Record<string, Limit> = {
  CreateTags: { capacity: 100, refillPerSecond: 10 },
  DeleteTags: { capacity: 100, refillPerSecond: 10 },
  CreateNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  DeleteNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  ModifyNetworkInterfaceAttribute: { capacity: 100, refillPerSecond: 5 },
  DescribeSecurityGroupReferences: { capacity: 20, refillPerSecond: 5 },
  DescribeStaleSecurityGroups: { capacity: 20, refillPerSecond: 5 },
};
const EC2_RESOURCE_INTENSIVE = /^(AuthorizeSecurityGroupIngress|RevokeSecurityGroupIngress)$/;
const EC2_SMALLER_UNFILTERED =
  /^Describe(Instances|InstanceStatus|NetworkInterfaces|SecurityGroups|Snapshots|SpotInstanceRequests|Volumes)$/;
const NON_MUTATING = /^(Describe|List|Search|Get)/;

/** The bucket a call draws from, and its documented (or chosen) figures for the whole account. */
export function limitOf(
  service: string,
  operation: string,
  input: unknown,
): { bucket: string; limit: Limit } {
  const own = (capacity: number, refillPerSecond: number, bucket = `${service}:${operation}`) => ({
    bucket,
    limit: { capacity, refillPerSecond },
  });
  if (service === "ec2") {
    const fixed = EC2_OWN[operation];
    if (fixed) return { bucket: `ec2:${operation}`, limit: fixed };
    if (EC2_RESOURCE_INTENSIVE.test(operation)) return own(50, 5);
    if (EC2_SMALLER_UNFILTERED.test(operation) && !filteredOrPaginated(input))
      return own(50, 10, `ec2:${operation}:unfiltered`);
    if (NON_MUTATING.test(operation)) return own(100, 20);
    return own(50, 5);
  }
  if (service === "elbv2") {
    if (operation === "RegisterTargets" || operation === "DeregisterTargets") return own(20, 4);
    if (operation.startsWith("Describe")) return own(40, 10);
    return own(20, 3);
  }
  if (service === "tagging") return own(20, 5);
  return own(100, 20);
}

function filteredOrPaginated(input: unknown): boolean {
  const i = (input ?? {}) as { Filters?: unknown[]; MaxResults?: unknown; NextToken?: unknown };
  return Boolean(i.Filters?.length) || i.MaxResults !== undefined || i.NextToken !== undefined;
}

/**
 * What a throttle leaves of the rate. Not a half: the rate that was throttled is usually only a little above
 * the account's, and every second spent far below it lengthens the whole run; the next throttle, if the
 * cut was too small, cuts again.
 */
const BACK_OFF = 0.7;
/** How long a learned rate is trusted without a throttle to confirm it; then its ceiling rises by 10%. */
const TRUST_SECONDS = 300;

/**
 * One bucket's learned state, driven by the caller's clock (seconds): pure, so that the learning can be
 * tested step by step.
 */
export class AdaptiveBucket {
  readonly max: Limit;
  /** The sustained rate allowed now, learned from throttles. */
  rate: number;
  /** The rate at which the bucket was last throttled; recovery slows down near it. */
  ceiling: number;
  throttles = 0;
  private tokens: number;
  private at: number;
  private lastBackoff = Number.NEGATIVE_INFINITY;
  private lastRaise = Number.NEGATIVE_INFINITY;

  constructor(max: Limit, now: number) {
    if (!(max.capacity >= 1) || !(max.refillPerSecond > 0))
      throw new Error(
        `a rate limit needs a capacity of at least 1 and a positive rate, got ${max.capacity} and ${max.refillPerSecond}`,
      );
    this.max = max;
    this.rate = max.refillPerSecond;
    this.ceiling = Number.POSITIVE_INFINITY;
    this.tokens = max.capacity;
    this.at = now;
  }

  /** The burst allowed now: the documented burst in proportion to the learned rate, at least one call. */
  get capacity(): number {
    return Math.max(1, (this.max.capacity * this.rate) / this.max.refillPerSecond);
  }

  available(now: number): number {
    if (now > this.at) {
      this.tokens = Math.min(this.capacity, this.tokens + (now - this.at) * this.rate);
      this.at = now;
    }
    return this.tokens;
  }

  take(now: number): boolean {
    if (this.available(now) < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Seconds until a whole token is there (0 when one is). */
  wait(now: number): number {
    const have = this.available(now);
    return have >= 1 ? 0 : (1 - have) / this.rate;
  }

  /**
   * The account's bucket is empty: cut the rate and empty ours. Throttles of calls that were already in
   * flight before the last back-off took effect say nothing new, so one back-off per second at most.
   */
  throttled(now: number): void {
    this.throttles++;
    this.available(now);
    this.tokens = Math.min(this.tokens, 0);
    if (now - this.lastBackoff < Math.max(1, 1 / this.rate)) return;
    this.lastBackoff = now;
    this.ceiling = this.rate;
    this.rate = Math.max(this.max.refillPerSecond / 50, this.rate * BACK_OFF);
    this.tokens = Math.min(this.tokens, this.capacity);
  }

  /**
   * A call went through: raise the rate by a step, a small one from 90% of the rate last throttled, and no
   * further than 97% of it, so that a learned rate is not probed again and again. Each five minutes without
   * a throttle, the others may have slowed down: the ceiling rises by 10%, and the rate follows (a probe).
   */
  succeeded(now: number): void {
    this.available(now);
    if (now - Math.max(this.lastBackoff, this.lastRaise) > TRUST_SECONDS) {
      this.ceiling *= 1.1;
      this.lastRaise = now;
    }
    const step = this.rate < this.ceiling * 0.9 ? 0.05 : 0.002;
    this.rate = Math.max(
      this.rate,
      Math.min(this.max.refillPerSecond, this.ceiling * 0.97, this.rate + step * this.max.refillPerSecond),
    );
  }
}

export interface RateLimiterOptions {
  /** The share of the documented figures Portico starts from, 0..1 (default 1); throttles teach it the rest. */
  share?: number;
  /** Replaces the figures of some buckets, by bucket name ("elbv2:RegisterTargets"). */
  limits?: Record<string, Limit>;
  /**
   * The share of a bucket's rate actually used (default 0.95). Requests reach AWS with some jitter, so a
   * client sending at exactly the refill rate sometimes finds the account's bucket a fraction of a token
   * short, and one throttle cuts the rate; 5% below it, the account's bucket keeps a token in hand.
   */
  headroom?: number;
  /** Clock in seconds and timer, replaceable in tests. */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => void;
}

export interface BucketStats {
  bucket: string;
  ratePerSecond: number;
  maxRatePerSecond: number;
  waiting: { user: number; background: number };
  throttles: number;
}

interface Waiter {
  priority: Priority;
  resolve: () => void;
}

/** Hands out calls bucket by bucket, in priority order, at the learned rates. */
export class RateLimiter {
  private readonly buckets = new Map<string, { state: AdaptiveBucket; queue: Waiter[]; timer: boolean }>();
  private readonly share: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => void;
  private readonly limits: Record<string, Limit>;
  private readonly headroom: number;
  /** Seconds calls spent waiting, by priority. */
  readonly waited = { user: 0, background: 0 };

  constructor(opts: RateLimiterOptions = {}) {
    this.share = opts.share ?? 1;
    if (!(this.share > 0 && this.share <= 1))
      throw new Error(`the rate limiter's share must be above 0 and at most 1, got ${this.share}`);
    this.limits = opts.limits ?? {};
    this.headroom = opts.headroom ?? 0.95;
    if (!(this.headroom > 0 && this.headroom <= 1))
      throw new Error(`the rate limiter's headroom must be above 0 and at most 1, got ${this.headroom}`);
    this.now = opts.now ?? (() => performance.now() / 1000);
    this.setTimer = opts.setTimer ?? ((fn, ms) => void setTimeout(fn, ms));
  }

  private entry(bucket: string, limit: Limit) {
    let e = this.buckets.get(bucket);
    if (!e) {
      const l = this.limits[bucket] ?? limit;
      const max = {
        capacity: Math.max(1, l.capacity * this.share),
        refillPerSecond: l.refillPerSecond * this.share * this.headroom,
      };
      this.buckets.set(bucket, (e = { state: new AdaptiveBucket(max, this.now()), queue: [], timer: false }));
    }
    return e;
  }

  /** Resolves when a call may be sent on `bucket`; user calls first, background ones when none is queued. */
  acquire(bucket: string, limit: Limit, p: Priority = currentPriority()): Promise<void> {
    const e = this.entry(bucket, limit);
    if (e.queue.length === 0 && e.state.take(this.now())) return Promise.resolve();
    const queuedAt = this.now();
    return new Promise<void>((resolve) => {
      e.queue.push({
        priority: p,
        resolve: () => {
          this.waited[p] += this.now() - queuedAt;
          resolve();
        },
      });
      this.schedule(bucket);
    });
  }

  private schedule(bucket: string): void {
    const e = this.buckets.get(bucket)!;
    if (e.timer || e.queue.length === 0) return;
    e.timer = true;
    this.setTimer(
      () => {
        e.timer = false;
        this.release(bucket);
      },
      Math.ceil(e.state.wait(this.now()) * 1000),
    );
  }

  private release(bucket: string): void {
    const e = this.buckets.get(bucket)!;
    while (e.queue.length && e.state.take(this.now())) {
      const i = e.queue.findIndex((w) => w.priority === "user");
      const [next] = e.queue.splice(i >= 0 ? i : 0, 1);
      next!.resolve();
    }
    this.schedule(bucket);
  }

  throttled(bucket: string): void {
    this.buckets.get(bucket)?.state.throttled(this.now());
  }

  succeeded(bucket: string): void {
    this.buckets.get(bucket)?.state.succeeded(this.now());
  }

  stats(): BucketStats[] {
    return [...this.buckets].map(([bucket, e]) => ({
      bucket,
      ratePerSecond: e.state.rate,
      maxRatePerSecond: e.state.max.refillPerSecond,
      waiting: {
        user: e.queue.filter((w) => w.priority === "user").length,
        background: e.queue.filter((w) => w.priority === "background").length,
      },
      throttles: e.state.throttles,
    }));
  }
}

/** The limiter's settings from the environment: undefined when PORTICO_AWS_RATE_LIMIT=off. */
export function rateLimiterOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): RateLimiterOptions | undefined {
  const on = env.PORTICO_AWS_RATE_LIMIT;
  if (on === "off" || on === "0" || on === "false") return undefined;
  const raw = env.PORTICO_AWS_RATE_SHARE;
  if (raw === undefined || raw === "") return {};
  const share = Number(raw);
  if (!(share > 0 && share <= 1))
    throw new Error(`PORTICO_AWS_RATE_SHARE=${raw} is not a share above 0 and at most 1 (e.g. 0.5)`);
  return { share };
}

const live = new Set<WeakRef<RateLimiter>>();

/** Registers a limiter for `liveRateLimiters` (the controller's metrics read them when scraped). */
export function track(limiter: RateLimiter): RateLimiter {
  live.add(new WeakRef(limiter));
  return limiter;
}

export function liveRateLimiters(): RateLimiter[] {
  const out: RateLimiter[] = [];
  for (const ref of live) {
    const l = ref.deref();
    if (l) out.push(l);
    else live.delete(ref);
  }
  return out;
}
