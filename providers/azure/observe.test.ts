import { describe, expect, test } from "vitest";
import type { AzureClients } from "./clients.ts";
import type { Observed } from "./model.ts";
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

describe("shared observations", () => {
  test("callers arriving together share one read", async () => {
    const { started, read } = gatedReads();
    const shared = new SharedObservations({} as AzureClients, read);
    const all = Promise.all([shared.observe(where), shared.observe(where), shared.observe(where)]);
    await settle();
    expect(started).toHaveLength(1);
    started[0]!.release();
    expect((await all).map((o) => o.at)).toEqual([0, 0, 0]);
  });

  test("a caller never joins a read already under way: it gets the next one, shared with later arrivals", async () => {
    const { started, read } = gatedReads();
    const shared = new SharedObservations({} as AzureClients, read);
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
    const shared = new SharedObservations({} as AzureClients, read);
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
    const shared = new SharedObservations({} as AzureClients, () => {
      calls++;
      return calls === 1
        ? Promise.reject(new Error("throttled"))
        : Promise.resolve({ loadBalancers: [], publicIps: [], at: calls });
    });
    await expect(shared.observe(where)).rejects.toThrow("throttled");
    expect((await shared.observe(where)).at).toBe(2);
  });
});
