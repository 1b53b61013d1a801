import { describe, expect, test } from "vitest";
import {
  AdaptiveBucket,
  AdaptiveWindow,
  currentPriority,
  liveRateLimiters,
  RateLimiter,
  rateLimiterOptionsFromEnv,
  track,
  withPriority,
  type Priority,
} from "./rateLimit.ts";

describe("priority", () => {
  test("is user unless said otherwise, and follows the work through awaits", async () => {
    expect(currentPriority()).toBe("user");
    const seen = await withPriority("background", async () => {
      await new Promise((r) => setTimeout(r, 1));
      const inner = withPriority("user", () => currentPriority());
      return [currentPriority(), inner];
    });
    expect(seen).toEqual(["background", "user"]);
    expect(currentPriority()).toBe("user");
  });
});

describe("AdaptiveBucket", () => {
  const max = { capacity: 20, refillPerSecond: 4 };

  test("starts with the documented burst and rate", () => {
    const b = new AdaptiveBucket(max, 0);
    let n = 0;
    while (b.take(0)) n++;
    expect(n).toBe(20);
    expect(b.wait(0)).toBeCloseTo(0.25);
    expect(b.take(0.25)).toBe(true);
  });

  test("a throttle cuts the rate and the burst to 70%, and empties the bucket", () => {
    const b = new AdaptiveBucket(max, 0);
    b.throttled(0);
    expect(b.rate).toBeCloseTo(2.8);
    expect(b.capacity).toBeCloseTo(14);
    expect(b.ceiling).toBe(4);
    expect(b.take(0)).toBe(false);
    expect(b.wait(0)).toBeCloseTo(1 / 2.8);
    expect(b.available(100)).toBeCloseTo(14);
  });

  test("throttles of calls already in flight back off once; a later one backs off again", () => {
    const b = new AdaptiveBucket(max, 0);
    b.throttled(0);
    b.throttled(0.1);
    b.throttled(0.9);
    expect(b.rate).toBeCloseTo(2.8);
    b.throttled(1.5);
    expect(b.rate).toBeCloseTo(1.96);
    expect(b.throttles).toBe(4);
  });

  test("the rate never falls below a fiftieth of the documented one, nor the burst below one call", () => {
    const b = new AdaptiveBucket(max, 0);
    for (let t = 0; t < 1000; t += 60) b.throttled(t);
    expect(b.rate).toBeCloseTo(0.08);
    expect(b.capacity).toBe(1);
  });

  /** A bucket throttled at its maximum (4/s), then given successes until it is back at 90% of that. */
  const recovered = () => {
    const b = new AdaptiveBucket(max, 0);
    b.throttled(0);
    b.succeeded(1);
    expect(b.rate).toBeCloseTo(3.0); // a fast step: 5% of the maximum
    for (let i = 0; i < 4; i++) b.succeeded(1);
    // 2.8 + 4 × 0.2 reaches 90% of the rate throttled, give or take the last step's rounding.
    expect(b.rate).toBeGreaterThanOrEqual(3.6);
    expect(b.rate).toBeLessThanOrEqual(3.8);
    return b;
  };

  test("successes raise the rate quickly up to 90% of the throttled rate, then slowly to 97% of it, no further", () => {
    const b = recovered();
    const from = b.rate;
    b.succeeded(1);
    expect(b.rate - from).toBeCloseTo(0.002 * 4); // a slow step: 0.2% of the maximum
    for (let i = 0; i < 1000; i++) b.succeeded(1);
    expect(b.rate).toBeCloseTo(0.97 * 4);
  });

  test("each five minutes without a throttle, the ceiling rises by 10% and the rate follows", () => {
    const slow = { capacity: 20, refillPerSecond: 10 };
    const b = new AdaptiveBucket(slow, 0);
    b.throttled(0); // ceiling 10, rate 7
    for (let i = 0; i < 1000; i++) b.succeeded(299);
    expect(b.rate).toBeCloseTo(9.7);
    b.succeeded(301);
    expect(b.ceiling).toBeCloseTo(11);
    for (let i = 0; i < 1000; i++) b.succeeded(302);
    expect(b.rate).toBe(10); // 97% of 11 is past the maximum
    b.succeeded(500);
    expect(b.ceiling).toBeCloseTo(11); // not five minutes since the last rise
  });

  test("holds no more tokens than the cloud says remain, and refills from there", () => {
    const b = new AdaptiveBucket(max, 0);
    b.remaining(0, 30);
    expect(b.available(0)).toBe(20);
    b.remaining(0, 2);
    expect(b.available(0)).toBe(2);
    b.remaining(0, -1);
    expect(b.take(0)).toBe(false);
    expect(b.available(1)).toBeCloseTo(4);
  });

  test("refuses a limit that could never let a call through", () => {
    expect(() => new AdaptiveBucket({ capacity: 0.5, refillPerSecond: 1 }, 0)).toThrow(
      /capacity of at least 1/,
    );
    expect(() => new AdaptiveBucket({ capacity: 5, refillPerSecond: 0 }, 0)).toThrow(/positive rate/);
  });

  // The account's bucket, of which others use 40%: a client that sends as fast as it is allowed learns the
  // rest. Simulated in 10 ms steps for 20 minutes.
  test("learns the account's share: throttled often at first, rarely once it has learned", () => {
    const share = 0.6;
    const account = { tokens: max.capacity * share, at: 0 };
    const accountTake = (now: number) => {
      account.tokens = Math.min(
        max.capacity * share,
        account.tokens + (now - account.at) * max.refillPerSecond * share,
      );
      account.at = now;
      if (account.tokens < 1) return false;
      account.tokens -= 1;
      return true;
    };
    const b = new AdaptiveBucket(max, 0);
    const throttlesIn = new Map<number, number>();
    let sent = 0;
    for (let step = 0; step < 120_000; step++) {
      const now = step / 100;
      if (!b.take(now)) continue;
      sent++;
      if (accountTake(now)) b.succeeded(now);
      else {
        b.throttled(now);
        const minute = Math.floor(now / 60);
        throttlesIn.set(minute, (throttlesIn.get(minute) ?? 0) + 1);
      }
    }
    const firstMinute = throttlesIn.get(0) ?? 0;
    const lastTen = [...throttlesIn].filter(([m]) => m >= 10).reduce((n, [, c]) => n + c, 0);
    expect(firstMinute).toBeGreaterThan(0);
    // Once learned, the rate is probed every five minutes, at the cost of a throttle or two each time.
    expect(lastTen).toBeLessThanOrEqual(5);
    // And the client uses most of its share: at least 85% of 2.4 calls a second over the 20 minutes.
    expect(sent / 1200).toBeGreaterThan(0.85 * max.refillPerSecond * share);
  });
});

/** A clock and timers under the test's control. */
function manualTime() {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => void timers.push({ at: now + ms / 1000, fn }),
    async advance(to: number) {
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > to) break;
        timers.shift();
        now = next.at;
        next.fn();
        await Promise.resolve();
      }
      now = to;
      await Promise.resolve();
    },
  };
}

describe("RateLimiter", () => {
  const limit = { capacity: 2, refillPerSecond: 1 };

  test("lets calls through at once while its bucket has tokens, then one per refill", async () => {
    const time = manualTime();
    const limiter = new RateLimiter({ ...time, headroom: 1 });
    const done: number[] = [];
    for (let i = 0; i < 4; i++) void limiter.acquire("b", limit).then(() => done.push(time.now()));
    await time.advance(0);
    expect(done).toEqual([0, 0]);
    await time.advance(5);
    expect(done).toEqual([0, 0, 1, 2]);
    expect(limiter.waited.user).toBe(3);
    expect(limiter.stats()[0]!.waitedSeconds).toBe(3);
  });

  test("buckets are independent", async () => {
    const time = manualTime();
    const limiter = new RateLimiter(time);
    const done: string[] = [];
    for (const b of ["a", "a", "a", "b"]) void limiter.acquire(b, limit).then(() => done.push(b));
    await time.advance(0);
    expect(done).toEqual(["a", "a", "b"]);
    await time.advance(5);
    // The third call on a waited for a's refill; b's call did not wait.
    expect(limiter.stats().map((s) => [s.bucket, s.waitedSeconds])).toEqual([
      ["a", expect.closeTo(1 / 0.95, 3)],
      ["b", 0],
    ]);
  });

  test("user work queued goes before background work queued earlier; background goes when none is left", async () => {
    const time = manualTime();
    const limiter = new RateLimiter({ ...time, headroom: 1 });
    const done: string[] = [];
    const ask = (name: string, p: Priority) =>
      void withPriority(p, () => limiter.acquire("b", limit)).then(() => done.push(name));
    ask("first", "background");
    ask("second", "background");
    ask("bg1", "background");
    ask("bg2", "background");
    await time.advance(0);
    ask("user1", "user");
    ask("user2", "user");
    await time.advance(10);
    expect(done).toEqual(["first", "second", "user1", "user2", "bg1", "bg2"]);
    expect(limiter.waited.background).toBe(3 + 4); // bg1 from 0 to 3, bg2 from 0 to 4
  });

  test("a throttle slows its bucket down; successes bring it back", async () => {
    const time = manualTime();
    const limiter = new RateLimiter({ ...time, headroom: 1 });
    await limiter.acquire("b", { capacity: 10, refillPerSecond: 10 });
    limiter.throttled("b");
    expect(limiter.stats()).toEqual([
      {
        bucket: "b",
        ratePerSecond: 7,
        maxRatePerSecond: 10,
        waiting: { user: 0, background: 0 },
        waitedSeconds: 0,
        throttles: 1,
      },
    ]);
    for (let i = 0; i < 10; i++) limiter.succeeded("b");
    // Fast steps of 0.5 up to 90% of the rate throttled (10), then slow ones of 0.02, at most to 9.7.
    expect(limiter.stats()[0]!.ratePerSecond).toBeGreaterThanOrEqual(9);
    expect(limiter.stats()[0]!.ratePerSecond).toBeLessThanOrEqual(9.7);
    limiter.throttled("unknown");
    limiter.succeeded("unknown");
    expect(limiter.stats()).toHaveLength(1);
  });

  test("starts from a share of the figures, and figures given per bucket replace the defaults", async () => {
    const time = manualTime();
    const limiter = new RateLimiter({
      ...time,
      headroom: 1,
      share: 0.5,
      limits: { b: { capacity: 4, refillPerSecond: 2 } },
    });
    const done: number[] = [];
    for (let i = 0; i < 4; i++) void limiter.acquire("b", limit).then(() => done.push(time.now()));
    await time.advance(0);
    await time.advance(5);
    expect(done).toEqual([0, 0, 1, 2]);
    expect(() => new RateLimiter({ share: 0 })).toThrow(/share must be above 0/);
    expect(() => new RateLimiter({ share: 1.5 })).toThrow(/at most 1/);
    expect(() => new RateLimiter({ headroom: 0 })).toThrow(/headroom must be above 0/);
  });

  test("by default keeps 5% below each bucket's rate, so jitter on the way does not meet an empty bucket", async () => {
    const time = manualTime();
    const limiter = new RateLimiter(time);
    const done: number[] = [];
    for (let i = 0; i < 3; i++) void limiter.acquire("b", limit).then(() => done.push(time.now()));
    await time.advance(0);
    await time.advance(5);
    expect(done).toHaveLength(3);
    expect(done[2]).toBeCloseTo(1 / 0.95, 2);
  });

  test("the waiting calls are counted by priority", async () => {
    const time = manualTime();
    const limiter = new RateLimiter(time);
    for (let i = 0; i < 3; i++) void limiter.acquire("b", limit, "user");
    void limiter.acquire("b", limit, "background");
    await time.advance(0);
    expect(limiter.stats()[0]!.waiting).toEqual({ user: 1, background: 1 });
  });

  test("tracked limiters are listed for the metrics", () => {
    const limiter = track(new RateLimiter());
    expect(liveRateLimiters()).toContain(limiter);
  });
});

describe("AdaptiveWindow", () => {
  const max = { capacity: 10, refillPerSecond: 1, windowSeconds: 10 };

  test("lets the window's calls through at once, then as many as have left the window", () => {
    const w = new AdaptiveWindow(max, 0);
    let n = 0;
    while (w.take(0)) n++;
    expect(n).toBe(10);
    expect(w.wait(1)).toBeCloseTo(9);
    expect(w.take(9.9)).toBe(false);
    // At 10 s every call sent at 0 has left the window: ten more may go, and none until they leave it.
    const sent = [10, 10, 10, 10, 10].map((t) => w.take(t));
    expect(sent).toEqual([true, true, true, true, true]);
    expect(w.available(10)).toBe(5);
    for (let i = 0; i < 5; i++) w.take(10);
    expect(w.take(15)).toBe(false);
    expect(w.wait(15)).toBeCloseTo(5);
    expect(w.available(20)).toBe(10);
  });

  test("a throttle teaches the window its count: the calls of ours the cloud still holds", () => {
    const w = new AdaptiveWindow(max, 0);
    for (let i = 0; i < 7; i++) w.take(i * 0.1);
    // The seventh is refused, and the sixth, in flight, too: the cloud held five.
    w.throttled(0.7);
    w.throttled(0.8);
    expect(w.throttles).toBe(2);
    expect(w.capacity).toBe(5);
    expect(w.take(0.9)).toBe(false);
    expect(w.wait(0.9)).toBeCloseTo(9.1); // the first leaves the window at 10 s
    expect(w.take(10)).toBe(true);
    // Successes do not raise it again until five minutes have passed without a throttle; then by 10% at a time.
    for (let i = 0; i < 100; i++) w.succeeded(100);
    expect(w.capacity).toBe(5);
    w.succeeded(301);
    expect(w.capacity).toBe(5); // 5.5 calls
    w.succeeded(450);
    expect(w.capacity).toBe(5);
    w.succeeded(602);
    expect(w.capacity).toBe(6); // 6.05
    expect(w.rate).toBeCloseTo(0.605);
  });

  test("a throttle with none of ours in the window backs off by 30%, never below a fiftieth", () => {
    const w = new AdaptiveWindow(max, 0);
    w.take(0);
    w.throttled(0);
    expect(w.capacity).toBe(7);
    for (let i = 0; i < 20; i++) w.throttled(i);
    expect(w.rate).toBeCloseTo(0.02);
    expect(w.capacity).toBe(1);
  });

  test("needs a length", () => {
    expect(() => new AdaptiveWindow({ capacity: 10, refillPerSecond: 1 }, 0)).toThrow(/positive length/);
  });

  test("a limiter's window keeps the headroom on its count, and queues the rest until calls leave it", async () => {
    const time = manualTime();
    const limiter = new RateLimiter(time);
    const done: number[] = [];
    for (let i = 0; i < 22; i++)
      void limiter
        .acquire("w", { capacity: 20, refillPerSecond: 2, windowSeconds: 10 })
        .then(() => done.push(time.now()));
    await time.advance(0);
    expect(done).toHaveLength(19); // 95% of 20
    await time.advance(9.99);
    expect(done).toHaveLength(19);
    await time.advance(10);
    expect(done).toHaveLength(22);
    expect(limiter.stats()[0]).toMatchObject({ bucket: "w", ratePerSecond: 1.9, maxRatePerSecond: 1.9 });
  });
});

describe("settings from the environment, under a provider's prefix", () => {
  test("on by default, off when asked, and a share read and checked", () => {
    expect(rateLimiterOptionsFromEnv("PORTICO_AZURE", {})).toEqual({});
    for (const off of ["off", "0", "false"])
      expect(rateLimiterOptionsFromEnv("PORTICO_AZURE", { PORTICO_AZURE_RATE_LIMIT: off })).toBeUndefined();
    expect(rateLimiterOptionsFromEnv("PORTICO_AZURE", { PORTICO_AWS_RATE_LIMIT: "off" })).toEqual({});
    expect(rateLimiterOptionsFromEnv("PORTICO_AZURE", { PORTICO_AZURE_RATE_SHARE: "0.25" })).toEqual({
      share: 0.25,
    });
    expect(() => rateLimiterOptionsFromEnv("PORTICO_AZURE", { PORTICO_AZURE_RATE_SHARE: "x" })).toThrow(
      "PORTICO_AZURE_RATE_SHARE=x is not a share above 0 and at most 1 (e.g. 0.5)",
    );
  });
});
