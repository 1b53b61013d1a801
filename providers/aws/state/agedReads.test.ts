import { afterEach, describe, expect, it, vi } from "vitest";
import { withPriority } from "../../priority.ts";
import { AgedReads } from "./agedReads.ts";
import { CLUSTER_CACHE_FOR_USERS_MS, CLUSTER_CACHE_MS } from "./cacheAge.ts";

/** A read whose answers the test settles by hand, counting how often it was called and with what. */
function deferredRead<V>() {
  const calls: { args: unknown[]; resolve: (v: V) => void; reject: (e: unknown) => void }[] = [];
  const read = (...args: unknown[]) =>
    new Promise<V>((resolve, reject) => {
      calls.push({ args, resolve, reject });
    });
  return { read, calls };
}

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("AgedReads", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("reads once and gives the kept answer to whoever asks while it is young", async () => {
    const c = clock();
    const reads = new AgedReads<string>({ now: c.now, maxAgeMs: () => 1000 });
    const read = vi.fn(() => Promise.resolve("a"));
    expect(await reads.get("k", read)).toBe("a");
    c.advance(999);
    expect(await reads.get("k", read)).toBe("a");
    expect(read).toHaveBeenCalledTimes(1);
  });

  it("reads again once the answer is as old as the age, and keeps the new answer", async () => {
    const c = clock();
    const reads = new AgedReads<number>({ now: c.now, maxAgeMs: () => 1000 });
    let n = 0;
    const read = vi.fn(() => Promise.resolve(++n));
    expect(await reads.get("k", read)).toBe(1);
    c.advance(1000);
    expect(await reads.get("k", read)).toBe(2);
    c.advance(500);
    expect(await reads.get("k", read)).toBe(2);
    expect(read).toHaveBeenCalledTimes(2);
  });

  it("keeps each key apart", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const read = vi.fn((k: string) => Promise.resolve(k.toUpperCase()));
    expect(await reads.get("a", () => read("a"))).toBe("A");
    expect(await reads.get("b", () => read("b"))).toBe("B");
    expect(await reads.get("a", () => read("a"))).toBe("A");
    expect(read).toHaveBeenCalledTimes(2);
  });

  it("shares one read among askers while it is under way", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const first = reads.get("k", read);
    const second = reads.get("k", read);
    expect(second).toBe(first);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve("a");
    expect(await Promise.all([first, second])).toEqual(["a", "a"]);
  });

  it("ages an answer from when its read began, not when it ended", async () => {
    const c = clock();
    const reads = new AgedReads<string>({ now: c.now, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const first = reads.get("k", read);
    c.advance(600);
    calls[0]!.resolve("a");
    await first;
    c.advance(400);
    void reads.get("k", read);
    expect(calls).toHaveLength(2);
  });

  it("does not keep a failed read: every asker of it sees the failure, the next asker reads again", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const first = reads.get("k", read);
    const second = reads.get("k", read);
    calls[0]!.reject(new Error("throttled"));
    await expect(first).rejects.toThrow("throttled");
    await expect(second).rejects.toThrow("throttled");
    const third = reads.get("k", read);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve("a");
    expect(await third).toBe("a");
  });

  it("treats a read that throws before returning its promise as a failed read", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    await expect(
      reads.get("k", () => {
        throw new Error("bad input");
      }),
    ).rejects.toThrow("bad input");
    expect(await reads.get("k", () => Promise.resolve("a"))).toBe("a");
  });

  it("asks the age at each question, so the asker decides how old is too old", async () => {
    const c = clock();
    let maxAge = 10_000;
    const reads = new AgedReads<number>({ now: c.now, maxAgeMs: () => maxAge });
    let n = 0;
    const read = vi.fn(() => Promise.resolve(++n));
    await reads.get("k", read);
    c.advance(5_000);
    expect(await reads.get("k", read)).toBe(1);
    maxAge = 1_000;
    expect(await reads.get("k", read)).toBe(2);
    maxAge = 10_000;
    c.advance(5_000);
    expect(await reads.get("k", read)).toBe(2);
  });

  it("ages by clusterCacheMs() unless told otherwise: a minute for background passes, ten for others", async () => {
    const c = clock();
    const reads = new AgedReads<number>({ now: c.now });
    let n = 0;
    const read = () => Promise.resolve(++n);
    await withPriority("user", () => reads.get("k", read));
    c.advance(CLUSTER_CACHE_MS);
    expect(await withPriority("user", () => reads.get("k", read))).toBe(1);
    expect(await withPriority("background", () => reads.get("k", read))).toBe(2);
    c.advance(CLUSTER_CACHE_MS - 1);
    expect(await withPriority("background", () => reads.get("k", read))).toBe(2);
    c.advance(CLUSTER_CACHE_FOR_USERS_MS - CLUSTER_CACHE_MS);
    expect(await withPriority("user", () => reads.get("k", read))).toBe(2);
    c.advance(1);
    expect(await withPriority("user", () => reads.get("k", read))).toBe(3);
  });

  it("reads the clock when asked by default, so a faked clock is followed", async () => {
    vi.useFakeTimers({ now: 0 });
    const reads = new AgedReads<number>({ maxAgeMs: () => 1000 });
    let n = 0;
    const read = () => Promise.resolve(++n);
    expect(await reads.get("k", read)).toBe(1);
    vi.advanceTimersByTime(999);
    expect(await reads.get("k", read)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await reads.get("k", read)).toBe(2);
  });

  it("forgets one key, or every key", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const read = vi.fn(() => Promise.resolve("a"));
    await reads.get("a", read);
    await reads.get("b", read);
    reads.forget("a");
    await reads.get("a", read);
    await reads.get("b", read);
    expect(read).toHaveBeenCalledTimes(3);
    reads.forget();
    await reads.get("a", read);
    await reads.get("b", read);
    expect(read).toHaveBeenCalledTimes(5);
  });

  it("after a forget, a read still under way answers its askers but is not given to later ones", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const before = reads.get("k", read);
    reads.forget();
    const after = reads.get("k", read);
    expect(calls).toHaveLength(2);
    calls[0]!.resolve("old");
    calls[1]!.resolve("new");
    expect(await before).toBe("old");
    expect(await after).toBe("new");
    expect(await reads.get("k", read)).toBe("new");
  });

  it("a failed read begun before a forget does not drop the answer read since", async () => {
    const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const before = reads.get("k", read);
    reads.forget();
    const after = reads.get("k", read);
    calls[1]!.resolve("new");
    expect(await after).toBe("new");
    calls[0]!.reject(new Error("late failure"));
    await expect(before).rejects.toThrow("late failure");
    expect(await reads.get("k", read)).toBe("new");
    expect(calls).toHaveLength(2);
  });

  it("a failed read does not drop the answer read since it aged out", async () => {
    const c = clock();
    const reads = new AgedReads<string>({ now: c.now, maxAgeMs: () => 1000 });
    const { read, calls } = deferredRead<string>();
    const slow = reads.get("k", read);
    c.advance(1000);
    const fresh = reads.get("k", read);
    calls[1]!.resolve("new");
    await fresh;
    calls[0]!.reject(new Error("timed out"));
    await expect(slow).rejects.toThrow("timed out");
    expect(await reads.get("k", read)).toBe("new");
    expect(calls).toHaveLength(2);
  });

  describe("getMany", () => {
    it("reads the keys it lacks in one read, and answers every key asked", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      const read = vi.fn((stale: string[]) =>
        Promise.resolve(new Map(stale.map((k) => [k, k.toUpperCase()]))),
      );
      expect(await reads.getMany(["a", "b"], read)).toEqual(
        new Map([
          ["a", "A"],
          ["b", "B"],
        ]),
      );
      expect(read).toHaveBeenCalledTimes(1);
      expect(read).toHaveBeenLastCalledWith(["a", "b"]);
      expect(await reads.getMany(["b", "c", "a"], read)).toEqual(
        new Map([
          ["b", "B"],
          ["c", "C"],
          ["a", "A"],
        ]),
      );
      expect(read).toHaveBeenCalledTimes(2);
      expect(read).toHaveBeenLastCalledWith(["c"]);
    });

    it("makes no read when every key is young, and asks each key once however often it is named", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      const read = vi.fn((stale: string[]) => Promise.resolve(new Map(stale.map((k) => [k, k]))));
      await reads.getMany(["a", "a", "b"], read);
      expect(read).toHaveBeenLastCalledWith(["a", "b"]);
      await reads.getMany(["b", "a"], read);
      expect(read).toHaveBeenCalledTimes(1);
      expect(await reads.getMany([], read)).toEqual(new Map());
      expect(read).toHaveBeenCalledTimes(1);
    });

    it("reads again the keys that aged out, each aged from the read that fetched it", async () => {
      const c = clock();
      const reads = new AgedReads<number>({ now: c.now, maxAgeMs: () => 1000 });
      let n = 0;
      const read = vi.fn((stale: string[]) => {
        n++;
        return Promise.resolve(new Map(stale.map((k) => [k, n])));
      });
      await reads.getMany(["a"], read);
      c.advance(600);
      await reads.getMany(["b"], read);
      c.advance(400);
      expect(await reads.getMany(["a", "b"], read)).toEqual(
        new Map([
          ["a", 3],
          ["b", 2],
        ]),
      );
      expect(read).toHaveBeenLastCalledWith(["a"]);
    });

    it("shares keys under way with other askers, single keys and batches alike", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      const { read, calls } = deferredRead<Map<string, string>>();
      const first = reads.getMany(["a", "b"], (stale) => read(stale));
      const second = reads.getMany(["b", "a"], (stale) => read(stale));
      const single = reads.get("a", () => Promise.reject(new Error("not read")));
      expect(calls).toHaveLength(1);
      const third = reads.getMany(["a", "c"], (stale) => read(stale));
      expect(calls).toHaveLength(2);
      expect(calls[1]!.args).toEqual([["c"]]);
      calls[0]!.resolve(
        new Map([
          ["a", "A"],
          ["b", "B"],
        ]),
      );
      calls[1]!.resolve(new Map([["c", "C"]]));
      expect([...(await first)]).toEqual([
        ["a", "A"],
        ["b", "B"],
      ]);
      expect([...(await second)]).toEqual([
        ["b", "B"],
        ["a", "A"],
      ]);
      expect(await single).toBe("A");
      expect([...(await third)]).toEqual([
        ["a", "A"],
        ["c", "C"],
      ]);
    });

    it("keeps nothing of a failed read, and keeps what other reads answered", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      await reads.getMany(["a"], () => Promise.resolve(new Map([["a", "A"]])));
      await expect(
        reads.getMany(["a", "b", "c"], () => Promise.reject(new Error("throttled"))),
      ).rejects.toThrow("throttled");
      const read = vi.fn((stale: string[]) =>
        Promise.resolve(new Map(stale.map((k) => [k, k.toUpperCase()]))),
      );
      expect([...(await reads.getMany(["a", "b", "c"], read))]).toEqual([
        ["a", "A"],
        ["b", "B"],
        ["c", "C"],
      ]);
      expect(read).toHaveBeenCalledWith(["b", "c"]);
    });

    it("fails, and keeps nothing, for a key the read did not answer; the keys it did answer are kept", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      await expect(reads.getMany(["a", "b"], () => Promise.resolve(new Map([["a", "A"]])))).rejects.toThrow(
        "no answer for b",
      );
      const read = vi.fn((stale: string[]) =>
        Promise.resolve(new Map(stale.map((k) => [k, k.toUpperCase()]))),
      );
      expect([...(await reads.getMany(["a", "b"], read))]).toEqual([
        ["a", "A"],
        ["b", "B"],
      ]);
      expect(read).toHaveBeenCalledWith(["b"]);
    });

    it("a read that throws before returning its promise fails the batch and keeps nothing", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      await expect(
        reads.getMany(["a"], () => {
          throw new Error("bad input");
        }),
      ).rejects.toThrow("bad input");
      expect(await reads.get("a", () => Promise.resolve("A"))).toBe("A");
    });

    it("is forgotten like single keys", async () => {
      const reads = new AgedReads<string>({ now: () => 0, maxAgeMs: () => 1000 });
      const read = vi.fn((stale: string[]) => Promise.resolve(new Map(stale.map((k) => [k, k]))));
      await reads.getMany(["a", "b"], read);
      reads.forget("a");
      await reads.getMany(["a", "b"], read);
      expect(read).toHaveBeenLastCalledWith(["a"]);
      reads.forget();
      await reads.getMany(["a", "b"], read);
      expect(read).toHaveBeenLastCalledWith(["a", "b"]);
      expect(read).toHaveBeenCalledTimes(3);
    });
  });
});
