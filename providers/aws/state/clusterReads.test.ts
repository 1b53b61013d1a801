import { afterEach, describe, expect, it, vi } from "vitest";
import { withPriority } from "../../priority.ts";
import { CLUSTER_CACHE_MS } from "./cacheAge.ts";
import { ClusterReads } from "./clusterReads.ts";

describe("ClusterReads", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("forget() drops every kept read at once", async () => {
    const kept = new ClusterReads();
    const all = [
      kept.subnets,
      kept.backendGroups,
      kept.vpcCidrs,
      kept.prefixLists,
      kept.userGroups,
      kept.certificates,
    ] as { get: (key: string, read: () => Promise<unknown>) => Promise<unknown> }[];
    const read = vi.fn(() => Promise.resolve(undefined));
    for (const reads of all) await reads.get("k", read);
    for (const reads of all) await reads.get("k", read);
    expect(read).toHaveBeenCalledTimes(all.length);
    kept.forget();
    for (const reads of all) await reads.get("k", read);
    expect(read).toHaveBeenCalledTimes(2 * all.length);
  });

  it("keeps the shared reads as long as the asking pass allows, what a Service names one minute whoever asks", async () => {
    vi.useFakeTimers({ now: 0 });
    const kept = new ClusterReads();
    const shared = [kept.subnets, kept.backendGroups, kept.vpcCidrs] as {
      get: (key: string, read: () => Promise<unknown>) => Promise<unknown>;
    }[];
    const named = [kept.prefixLists, kept.userGroups, kept.certificates] as typeof shared;
    const read = vi.fn(() => Promise.resolve(undefined));
    for (const reads of [...shared, ...named]) await reads.get("k", read);
    vi.advanceTimersByTime(CLUSTER_CACHE_MS);
    read.mockClear();
    for (const reads of shared) await withPriority("user", () => reads.get("k", read));
    expect(read).not.toHaveBeenCalled();
    for (const reads of named) await withPriority("user", () => reads.get("k", read));
    expect(read).toHaveBeenCalledTimes(named.length);
    read.mockClear();
    for (const reads of shared) await withPriority("background", () => reads.get("k", read));
    expect(read).toHaveBeenCalledTimes(shared.length);
  });
});
