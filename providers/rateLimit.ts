// Client-side rate limiting shared by the cloud providers, so that Portico stays under a cloud account's request
// limits instead of bouncing off them: one limiter per provider's clients, shared by every worker, with a learned
// limit per bucket the cloud keeps. The providers name the buckets and their documented figures
// (providers/aws/rateLimiter.ts, providers/azure/arm/rateLimit.ts); what is common lives here: the learning, the
// queueing by priority, and the registry the controller's metrics read.
//
// The documented figures are the whole account's; other software on the account draws from the same limits, so
// the limiter learns Portico's share from throttled answers: a throttle cuts the bucket's rate (and burst) to 70%
// and empties it, successes raise the rate again additively — quickly up to 90% of the rate that was last
// throttled, then slowly up to 97% of it; that ceiling rises by 10% after each five minutes without a throttle,
// so a learned rate is probed rarely and the share others give back is retaken.
//
// Two shapes of limit: a token bucket (a burst and a refill rate: AWS's buckets, ARM's since 2024), and a
// sliding window (so many calls in any so many seconds: Azure's resource providers publish theirs that way),
// kept exactly, since a bucket that never breaks a window must give up much of its rate or of its burst.
//
// Calls carry a priority (`withPriority`): a change a user waits for ("user", the default) goes before
// background work (resync) queued on the same bucket, which waits while user work is queued.
import { currentPriority, withPriority, type Priority } from "./priority.ts";

export { currentPriority, withPriority, type Priority };

export interface Limit {
  /** A bucket's burst, or a window's calls. */
  capacity: number;
  /** The sustained rate: a bucket's refill, or a window's calls over its length. */
  refillPerSecond: number;
  /** Set for a sliding window: `capacity` calls in any `windowSeconds`. */
  windowSeconds?: number;
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
  protected tokens: number;
  protected at: number;
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

  /**
   * The cloud says this many tokens remain in its bucket (ARM's remaining-requests headers): never hold more. It
   * counted them when it took the request, so calls sent since and the refill since make this a cautious bound.
   */
  remaining(now: number, tokens: number): void {
    this.available(now);
    this.tokens = Math.min(this.tokens, Math.max(0, tokens));
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

/**
 * A sliding window's learned state: at most `capacity` calls (the documented count, or what throttles taught) in
 * any `windowSeconds`, the calls' send times kept. A window is learned by its count, not by cutting a rate: when the
 * cloud refuses a call, the calls of ours it still holds in its window are its limit for us (the refused call
 * itself, and any refused before it, never counted there). Each five minutes without a throttle the count rises by
 * 10%, so a share others give back is retaken.
 */
export class AdaptiveWindow extends AdaptiveBucket {
  readonly windowSeconds: number;
  private readonly sent: number[] = [];
  private head = 0;
  private lastThrottle = Number.NEGATIVE_INFINITY;

  constructor(max: Limit, now: number) {
    super(max, now);
    if (!(max.windowSeconds !== undefined && max.windowSeconds > 0))
      throw new Error(`a sliding window needs a positive length, got ${max.windowSeconds}`);
    this.windowSeconds = max.windowSeconds;
  }

  /** The calls allowed in a window now: whole calls, at least one. */
  override get capacity(): number {
    return Math.max(1, Math.floor((this.max.capacity * this.rate) / this.max.refillPerSecond + 1e-9));
  }

  /** Calls that may still be sent in the window ending at `now`. */
  override available(now: number): number {
    while (this.head < this.sent.length && this.sent[this.head]! <= now - this.windowSeconds) this.head++;
    // Drops the calls that left the window once they are most of what is kept.
    if (this.head > 1024 && this.head * 2 > this.sent.length) {
      this.sent.splice(0, this.head);
      this.head = 0;
    }
    return this.capacity - (this.sent.length - this.head);
  }

  override take(now: number): boolean {
    if (this.available(now) < 1) return false;
    this.sent.push(now);
    return true;
  }

  /** Seconds until enough of the calls in the window have left it for one more. */
  override wait(now: number): number {
    const have = this.available(now);
    if (have >= 1) return 0;
    return this.sent[this.head - have]! + this.windowSeconds - now;
  }

  override throttled(now: number): void {
    this.throttles++;
    this.lastThrottle = now;
    this.available(now);
    if (this.sent.length > this.head) this.sent.pop();
    const held = this.sent.length - this.head;
    // With none of ours in its window the cloud's limit is others' doing: back off as a bucket does.
    const rate = held >= 1 ? held / this.windowSeconds : this.rate * 0.7;
    this.ceiling = Math.min(this.ceiling, Math.max(rate, this.max.refillPerSecond / 50));
    this.rate = Math.min(this.rate, this.ceiling);
  }

  override succeeded(now: number): void {
    if (this.rate >= this.max.refillPerSecond || now - this.lastThrottle <= TRUST_SECONDS) return;
    this.lastThrottle = now;
    this.ceiling = Math.min(this.max.refillPerSecond, this.ceiling * 1.1);
    this.rate = this.ceiling;
  }
}

export interface RateLimiterOptions {
  /** The share of the documented figures Portico starts from, 0..1 (default 1); throttles teach it the rest. */
  share?: number;
  /** Replaces the figures of some buckets, by bucket name ("elbv2:RegisterTargets", "arm:writes"). */
  limits?: Record<string, Limit>;
  /**
   * The share of a bucket's rate actually used (default 0.95). Requests reach the cloud with some jitter, so a
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
  /** Seconds calls have spent waiting on this bucket, all priorities: where a busy controller's time goes. */
  waitedSeconds: number;
  throttles: number;
}

interface Waiter {
  priority: Priority;
  resolve: () => void;
}

/** Hands out calls bucket by bucket, in priority order, at the learned rates. */
export class RateLimiter {
  private readonly buckets = new Map<
    string,
    { state: AdaptiveBucket; queue: Waiter[]; timer: boolean; waited: number }
  >();
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
      // A bucket keeps its burst and sends below its rate (jitter on the way); a window's calls are counted
      // where they arrive, later than they were sent, so it keeps the headroom on its count.
      const calls = Math.max(1, Math.floor(l.capacity * this.share * this.headroom));
      const max = l.windowSeconds
        ? { capacity: calls, refillPerSecond: calls / l.windowSeconds, windowSeconds: l.windowSeconds }
        : {
            capacity: Math.max(1, l.capacity * this.share),
            refillPerSecond: l.refillPerSecond * this.share * this.headroom,
          };
      const state = max.windowSeconds
        ? new AdaptiveWindow(max, this.now())
        : new AdaptiveBucket(max, this.now());
      this.buckets.set(bucket, (e = { state, queue: [], timer: false, waited: 0 }));
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
          const waited = this.now() - queuedAt;
          this.waited[p] += waited;
          e.waited += waited;
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

  /** The cloud's own count of what remains in a bucket, where it tells it. */
  remaining(bucket: string, tokens: number): void {
    this.buckets.get(bucket)?.state.remaining(this.now(), tokens);
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
      waitedSeconds: e.waited,
      throttles: e.state.throttles,
    }));
  }
}

/**
 * A limiter's settings from the environment, under a provider's prefix: undefined when `<prefix>_RATE_LIMIT` is
 * off, 0 or false; `<prefix>_RATE_SHARE` starts it at a share of the documented figures.
 */
export function rateLimiterOptionsFromEnv(
  prefix: string,
  env: NodeJS.ProcessEnv = process.env,
): RateLimiterOptions | undefined {
  const on = env[`${prefix}_RATE_LIMIT`];
  if (on === "off" || on === "0" || on === "false") return undefined;
  const raw = env[`${prefix}_RATE_SHARE`];
  if (raw === undefined || raw === "") return {};
  const share = Number(raw);
  if (!(share > 0 && share <= 1))
    throw new Error(`${prefix}_RATE_SHARE=${raw} is not a share above 0 and at most 1 (e.g. 0.5)`);
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
