import { describe, expect, test } from "vitest";
import type { AzureClients } from "../arm/clients.ts";
import type { Observed } from "../model.ts";
import { SharedObservations, type Where } from "./observe.ts";

const where: Where = { loadBalancerGroup: "rg", publicIpGroups: ["rg"] };

/** A read that stays pending until released, recording when each started. */
function gatedReads() {
  const started: { release: () => void }[] = [];
  const read = (_c: AzureClients, _w: Where): Promise<Observed & { at: number }> =>
    new Promise((resolve) => {
      const n = started.length;
      started.push({ release: () => resolve({ loadBalancers: [], publicIps: [], at: n }) });
    });
  return { started, read };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
/** The tests of who shares which read, without the spacing between reads (tested on its own below). */
const unspaced = { minIntervalMs: 0 };

describe("shared observations", () => {
  test("callers arriving together share one read", async () => {
    const { started, read } = gatedReads();
    const shared = new SharedObservations({} as AzureClients, read, unspaced);
    const all = Promise.all([shared.observe(where), shared.observe(where), shared.observe(where)]);
    await settle();
    expect(started).toHaveLength(1);
    started[0]!.release();
    expect((await all).map((o) => o.at)).toEqual([0, 0, 0]);
  });

  test("a caller never joins a read already under way: it gets the next one, shared with later arrivals", async () => {
    const { started, read } = gatedReads();
    const shared = new SharedObservations({} as AzureClients, read, unspaced);
    const first = shared.observe(where);
    await settle();
    const second = shared.observe(where);
    const third = shared.observe(where);
    await settle();
    // The next read waits for the one under way, so that it starts after both asked.
    expect(started).toHaveLength(1);
    started[0]!.release();
    expect((await first).at).toBe(0);
    await settle();
    expect(started).toHaveLength(2);
    started[1]!.release();
    expect([(await second).at, (await third).at]).toEqual([1, 1]);
  });

  test("each caller gets lists of its own, and other places are read on their own", async () => {
    const { started, read } = gatedReads();
    const shared = new SharedObservations({} as AzureClients, read, unspaced);
    const a = shared.observe(where);
    const b = shared.observe(where);
    const elsewhere = shared.observe({ loadBalancerGroup: "rg", publicIpGroups: ["rg", "other"] });
    await settle();
    expect(started).toHaveLength(2);
    started.forEach((s) => s.release());
    const [x, y] = [await a, await b];
    x.publicIps.push({ name: "mine" });
    expect(y.publicIps).toEqual([]);
    expect((await elsewhere).at).toBe(1);
  });

  test("a failed read fails those who shared it, and the next caller reads again", async () => {
    let calls = 0;
    const shared = new SharedObservations(
      {} as AzureClients,
      () => {
        calls++;
        return calls === 1
          ? Promise.reject(new Error("throttled"))
          : Promise.resolve({ loadBalancers: [], publicIps: [], at: calls });
      },
      unspaced,
    );
    await expect(shared.observe(where)).rejects.toThrow("throttled");
    expect((await shared.observe(where)).at).toBe(2);
  });

  test("a read starts no sooner than the spacing after the one before started, shared by all who asked meanwhile", async () => {
    const { started, read } = gatedReads();
    let clock = 0;
    const sleeps: { ms: number; wake: () => void }[] = [];
    const shared = new SharedObservations({} as AzureClients, read, {
      minIntervalMs: 1000,
      now: () => clock,
      sleep: (ms) => new Promise<void>((wake) => sleeps.push({ ms, wake })),
    });
    // None before it: the first starts at once.
    const first = shared.observe(where);
    await settle();
    expect([started.length, sleeps.length]).toEqual([1, 0]);
    clock = 200;
    started[0]!.release();
    await first;
    // 200 ms after the first started: the next waits the remaining 800 ms, and those asking meanwhile join it.
    const second = shared.observe(where);
    await settle();
    expect(sleeps.map((s) => s.ms)).toEqual([800]);
    const third = shared.observe(where);
    await settle();
    expect([started.length, sleeps.length]).toEqual([1, 1]);
    clock = 1000;
    sleeps[0]!.wake();
    await settle();
    expect(started).toHaveLength(2);
    started[1]!.release();
    expect([(await second).at, (await third).at]).toEqual([1, 1]);
    // Long after: no wait at all.
    clock = 5000;
    const fourth = shared.observe(where);
    await settle();
    expect([started.length, sleeps.length]).toEqual([3, 1]);
    started[2]!.release();
    expect((await fourth).at).toBe(2);
  });

  test("a read waiting out the spacing starts at once when everyone who may ask is waiting for it", async () => {
    const { started, read } = gatedReads();
    let askers = 3;
    const sleeps: number[] = [];
    const shared = new SharedObservations({} as AzureClients, read, {
      minIntervalMs: 1000,
      askers: () => askers,
      now: () => 0,
      // A spacing that never ends by itself: only the early start can begin the read.
      sleep: (ms) => new Promise<void>(() => void sleeps.push(ms)),
    });
    const first = shared.observe(where);
    await settle();
    started[0]!.release();
    await first;
    const second = shared.observe(where);
    const third = shared.observe(where);
    await settle();
    // Two of three wait: the third may still come, so the read waits for it.
    expect([started.length, sleeps]).toEqual([1, [1000]]);
    // The third leaves without asking (a reconcile that ended): the two waiting are all there are.
    askers = 2;
    shared.poke();
    await settle();
    expect(started).toHaveLength(2);
    started[1]!.release();
    expect([(await second).at, (await third).at]).toEqual([1, 1]);
    // All three ask together: nobody else can join, no waiting.
    askers = 3;
    const all = Promise.all([shared.observe(where), shared.observe(where), shared.observe(where)]);
    await settle();
    expect(started).toHaveLength(3);
    started[2]!.release();
    expect((await all).map((o) => o.at)).toEqual([2, 2, 2]);
  });
});
