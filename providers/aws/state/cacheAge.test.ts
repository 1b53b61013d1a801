import { describe, expect, test } from "vitest";
import { withPriority } from "../../priority.ts";
import { CLUSTER_CACHE_FOR_USERS_MS, CLUSTER_CACHE_MS, clusterCacheMs } from "./cacheAge.ts";

describe("how old the cluster's shared reads may be", () => {
  test("a background pass reads them again after a minute, so drift is found within a resync period", () => {
    expect(withPriority("background", clusterCacheMs)).toBe(CLUSTER_CACHE_MS);
    expect(CLUSTER_CACHE_MS).toBe(60_000);
  });

  test("a pass someone waits for takes a copy up to ten minutes old", () => {
    expect(withPriority("user", clusterCacheMs)).toBe(CLUSTER_CACHE_FOR_USERS_MS);
    // Outside any pass (a tool's one-off plan) is a user's.
    expect(clusterCacheMs()).toBe(CLUSTER_CACHE_FOR_USERS_MS);
    expect(CLUSTER_CACHE_FOR_USERS_MS).toBe(600_000);
  });
});
