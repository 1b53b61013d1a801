import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { startWorkers, WorkQueue } from "./queue.ts";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Lets every pending promise continuation run without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

/** Whether `promise` has settled once pending continuations have run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settle();
  return settled;
}

describe("WorkQueue", () => {
  test("a key added many times while waiting is handed out once", async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 5; i++) queue.add("ns/a");
    queue.add("ns/b");
    expect(queue.length).toBe(2);
    expect(await queue.get()).toBe("ns/a");
    expect(await queue.get()).toBe("ns/b");
    expect(queue.length).toBe(0);
    expect(await isSettled(queue.get())).toBe(false);
  });

  test("a key added while it is processed waits for done() and then runs once more", async () => {
    const queue = new WorkQueue();
    queue.add("k");
    expect(await queue.get()).toBe("k");
    queue.add("k");
    queue.add("k");
    expect(queue.length).toBe(0);
    const next = queue.get();
    expect(await isSettled(next)).toBe(false);

    queue.done("k");
    expect(await next).toBe("k");
    queue.done("k");
    expect(queue.length).toBe(0);
    expect(await isSettled(queue.get())).toBe(false);
  });

  test("a waiting get() is woken by add()", async () => {
    const queue = new WorkQueue();
    const first = queue.get();
    const second = queue.get();
    queue.add("x");
    queue.add("y");
    expect(await Promise.all([first, second])).toEqual(["x", "y"]);
  });

  test("addAfter makes the key ready only after the delay, and the soonest pending delay wins", async () => {
    const queue = new WorkQueue();
    queue.addAfter("later-then-sooner", 1000);
    queue.addAfter("later-then-sooner", 200);
    queue.addAfter("sooner-then-later", 200);
    queue.addAfter("sooner-then-later", 1000);
    await vi.advanceTimersByTimeAsync(199);
    expect(queue.length).toBe(0);

    await vi.advanceTimersByTimeAsync(1);
    expect(queue.length).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
    expect([await queue.get(), await queue.get()].sort()).toEqual(["later-then-sooner", "sooner-then-later"]);
  });

  test("dueInMs tells how long until a key's delayed add, and nothing once it has come or for another key", async () => {
    const queue = new WorkQueue();
    queue.addAfter("k", 1000);
    expect(queue.dueInMs("k")).toBe(1000);
    expect(queue.dueInMs("other")).toBeUndefined();
    await vi.advanceTimersByTimeAsync(400);
    expect(queue.dueInMs("k")).toBe(600);
    await vi.advanceTimersByTimeAsync(600);
    expect(queue.dueInMs("k")).toBeUndefined();
    expect(queue.waiting("k")).toBe(true);
  });

  test("addAfter with no delay adds at once", () => {
    const queue = new WorkQueue();
    queue.addAfter("now", 0);
    expect(queue.length).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  test("addRateLimited backs off base * 2^failures up to the maximum, and forget() starts over", async () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    for (const expected of [100, 200, 400, 800, 1000, 1000]) {
      queue.addRateLimited("k");
      await vi.advanceTimersByTimeAsync(expected - 1);
      expect(queue.length).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(queue.length).toBe(1);
      queue.done((await queue.get())!);
    }
    expect(queue.failures("k")).toBe(6);

    queue.forget("k");
    expect(queue.failures("k")).toBe(0);
    queue.addRateLimited("k");
    await vi.advanceTimersByTimeAsync(99);
    expect(queue.length).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(queue.length).toBe(1);
  });

  test("shutDown wakes every waiting get(), hands out what is ready, ignores later adds and leaves no timer", async () => {
    const queue = new WorkQueue();
    const waiting = [queue.get(), queue.get()];
    expect(await isSettled(Promise.race(waiting))).toBe(false);
    queue.shutDown();
    expect(await Promise.all(waiting)).toEqual([undefined, undefined]);

    const draining = new WorkQueue();
    draining.add("ready");
    draining.addAfter("delayed", 5000);
    draining.addRateLimited("failed");
    expect(vi.getTimerCount()).toBe(2);
    draining.shutDown();
    expect(vi.getTimerCount()).toBe(0);
    draining.add("late");
    draining.addAfter("late", 10);
    expect(await draining.get()).toBe("ready");
    expect(await draining.get()).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  test("a key processed during shutdown is not queued again", async () => {
    const queue = new WorkQueue();
    queue.add("k");
    expect(await queue.get()).toBe("k");
    queue.add("k");
    queue.shutDown();
    queue.done("k");
    expect(queue.length).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });

  test("get() with an aborted signal takes no key and passes its wake-up on", async () => {
    const queue = new WorkQueue();
    const abort = new AbortController();
    const abandoned = queue.get(abort.signal);
    const other = queue.get();
    // add() wakes the first waiter, which is aborted before it can take the key: the other one must get it.
    queue.add("k");
    abort.abort();
    expect(await abandoned).toBeUndefined();
    expect(await other).toBe("k");

    queue.add("left");
    expect(await queue.get(AbortSignal.abort())).toBeUndefined();
    expect(queue.length).toBe(1);
  });
});

describe("WorkQueue lanes", () => {
  const drain = async (queue: WorkQueue) => {
    const out: string[] = [];
    while (queue.length) {
      const key = (await queue.get())!;
      out.push(`${key}${queue.takenAsBackground(key) ? " (background)" : ""}`);
      queue.done(key);
    }
    return out;
  };

  test("keys added for changes are handed out before background keys queued earlier", async () => {
    const queue = new WorkQueue();
    for (const key of ["r1", "r2", "r3"]) queue.add(key, true);
    queue.add("change");
    expect(await drain(queue)).toEqual(["change", "r1 (background)", "r2 (background)", "r3 (background)"]);
  });

  test("a change to a key waiting as background work moves it to the changes' lane, never back", async () => {
    const queue = new WorkQueue();
    queue.add("a", true);
    queue.add("b", true);
    queue.add("b");
    queue.add("b", true);
    queue.add("c");
    queue.add("c", true);
    expect(await drain(queue)).toEqual(["b", "c", "a (background)"]);
  });

  test("a key re-added while being processed comes back in the lane it was re-added to", async () => {
    const queue = new WorkQueue();
    queue.add("k");
    const first = (await queue.get())!;
    expect(queue.takenAsBackground(first)).toBe(false);
    queue.add("k", true);
    queue.add("other", true);
    queue.done(first);
    expect(await drain(queue)).toEqual(["other (background)", "k (background)"]);
  });

  test("a delayed background add joins the background lane", async () => {
    const queue = new WorkQueue();
    queue.addAfter("poll", 1000, true);
    await vi.advanceTimersByTimeAsync(1000);
    queue.add("change");
    expect(await drain(queue)).toEqual(["change", "poll (background)"]);
  });
});

describe("startWorkers", () => {
  test("one key never runs in two handlers at once, even when re-added while in flight", async () => {
    const queue = new WorkQueue();
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const workers = startWorkers(queue, {
      workers: 8,
      handle: async () => {
        runs++;
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 100));
        active--;
      },
    });
    queue.add("svc");
    await settle();
    for (let i = 0; i < 20; i++) queue.add("svc");
    await settle();
    expect(active).toBe(1);

    await vi.advanceTimersByTimeAsync(1000);
    // The twenty adds made while it ran coalesce into exactly one more run.
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
    await workers.stop();
  });

  test("distinct keys run concurrently, up to the number of workers", async () => {
    const queue = new WorkQueue();
    const release = Promise.withResolvers<void>();
    const started: string[] = [];
    const finished: string[] = [];
    const workers = startWorkers(queue, {
      workers: 3,
      handle: async (key) => {
        started.push(key);
        await release.promise;
        finished.push(key);
      },
    });
    for (const key of ["a", "b", "c", "d", "e"]) queue.add(key);
    await settle();
    expect(started).toEqual(["a", "b", "c"]);
    expect(queue.length).toBe(2);

    release.resolve();
    await settle();
    expect(finished.sort()).toEqual(["a", "b", "c", "d", "e"]);
    await workers.stop();
  });

  test("a key added many times while waiting for a worker runs once", async () => {
    const queue = new WorkQueue();
    const busy = Promise.withResolvers<void>();
    const runs = new Map<string, number>();
    const workers = startWorkers(queue, {
      workers: 1,
      handle: async (key) => {
        runs.set(key, (runs.get(key) ?? 0) + 1);
        if (key === "blocker") await busy.promise;
      },
    });
    queue.add("blocker");
    await settle();
    for (let i = 0; i < 10; i++) queue.add("waiting");
    busy.resolve();
    await settle();
    expect(Object.fromEntries(runs)).toEqual({ blocker: 1, waiting: 1 });
    await workers.stop();
  });

  test("a failing key is retried after base * 2^n, capped; onError sees each failure first; success forgets", async () => {
    const queue = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 300 });
    const start = performance.now();
    const runTimes: number[] = [];
    const errors: { key: string; message: string; failuresBefore: number }[] = [];
    const workers = startWorkers(queue, {
      workers: 2,
      handle: async () => {
        runTimes.push(performance.now() - start);
        if (runTimes.length <= 4) throw new Error(`attempt ${runTimes.length} failed`);
        return Promise.resolve();
      },
      onError: (key, err) =>
        errors.push({ key, message: (err as Error).message, failuresBefore: queue.failures(key) }),
    });
    queue.add("svc");
    await vi.advanceTimersByTimeAsync(10_000);

    // Retries at +100, +200, +300 (capped, not 400) and +300 after the previous run.
    expect(runTimes).toEqual([0, 100, 300, 600, 900]);
    expect(errors).toEqual([
      { key: "svc", message: "attempt 1 failed", failuresBefore: 0 },
      { key: "svc", message: "attempt 2 failed", failuresBefore: 1 },
      { key: "svc", message: "attempt 3 failed", failuresBefore: 2 },
      { key: "svc", message: "attempt 4 failed", failuresBefore: 3 },
    ]);
    expect(queue.failures("svc")).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await workers.stop();
  });

  test("a handler that asks for requeueAfterMs runs again after that delay", async () => {
    const queue = new WorkQueue();
    const start = performance.now();
    const runTimes: number[] = [];
    const workers = startWorkers(queue, {
      workers: 1,
      handle: () => {
        runTimes.push(performance.now() - start);
        return Promise.resolve(runTimes.length === 1 ? { requeueAfterMs: 5000 } : undefined);
      },
    });
    queue.add("svc");
    await vi.advanceTimersByTimeAsync(4999);
    expect(runTimes).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runTimes).toEqual([0, 5000]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runTimes).toEqual([0, 5000]);
    await workers.stop();
  });

  test("a throwing onError neither stops the worker nor loses the retry", async () => {
    const queue = new WorkQueue({ baseDelayMs: 10 });
    let runs = 0;
    const workers = startWorkers(queue, {
      workers: 1,
      handle: () => (++runs === 1 ? Promise.reject(new Error("boom")) : Promise.resolve()),
      onError: () => {
        throw new Error("reporter broke");
      },
    });
    queue.add("k");
    await vi.advanceTimersByTimeAsync(10);
    expect(runs).toBe(2);
    queue.add("other");
    await settle();
    expect(runs).toBe(3);
    await workers.stop();
  });

  test("shutting the queue down drains the ready keys, ends the workers and leaves no timer", async () => {
    const queue = new WorkQueue();
    const handled: string[] = [];
    const workers = startWorkers(queue, {
      workers: 2,
      handle: async (key) => {
        await new Promise((r) => setTimeout(r, 50));
        handled.push(key);
        if (key === "fails") throw new Error("retry me");
        return key === "periodic" ? { requeueAfterMs: 30_000 } : undefined;
      },
    });
    for (const key of ["fails", "periodic", "a", "b"]) queue.add(key);
    await settle();
    queue.shutDown();
    await vi.advanceTimersByTimeAsync(200);

    // The two waiting keys still ran after shutdown; the retry and the periodic requeue were not scheduled.
    expect(handled.sort()).toEqual(["a", "b", "fails", "periodic"]);
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await workers.stop();
  });

  test("stop() takes no more keys, aborts the handlers' signal and waits for the ones in flight", async () => {
    const queue = new WorkQueue();
    const signals: AbortSignal[] = [];
    let finished = 0;
    const workers = startWorkers(queue, {
      workers: 1,
      handle: async (_key, signal) => {
        signals.push(signal);
        await new Promise((r) => setTimeout(r, 100));
        finished++;
      },
    });
    queue.add("in-flight");
    queue.add("not-taken");
    await settle();

    const stopped = workers.stop();
    expect(signals[0]?.aborted).toBe(true);
    expect(await isSettled(stopped)).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(await isSettled(stopped)).toBe(true);
    expect(finished).toBe(1);
    expect(signals).toHaveLength(1);
    expect(queue.length).toBe(1);
  });

  test("a requeue the handler asks for comes back as background work; a failure is retried in its own lane", async () => {
    const queue = new WorkQueue({ baseDelayMs: 10 });
    const passes: string[] = [];
    let pollFirst = true;
    let resyncFirst = true;
    const workers = startWorkers(queue, {
      workers: 1,
      handle: (key, _signal, { background }) => {
        passes.push(`${key}${background ? " (background)" : ""}`);
        if (key === "poll" && pollFirst) {
          pollFirst = false;
          return Promise.resolve({ requeueAfterMs: 100 });
        }
        if (key === "resync" && resyncFirst) {
          resyncFirst = false;
          return Promise.reject(new Error("retry me"));
        }
        return Promise.resolve(undefined);
      },
    });
    queue.add("poll");
    queue.add("resync", true);
    await vi.advanceTimersByTimeAsync(200);
    expect(passes).toEqual(["poll", "resync (background)", "resync (background)", "poll (background)"]);
    await workers.stop();
  });
});
