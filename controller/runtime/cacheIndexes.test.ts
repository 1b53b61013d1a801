import { describe, expect, test } from "vitest";
import type { V1EndpointSlice } from "@kubernetes/client-node";
import { SliceIndex, StableList } from "./cacheIndexes.ts";

const slice = (namespace: string, name: string, service?: string, version = "1"): V1EndpointSlice => ({
  addressType: "IPv4",
  endpoints: [],
  metadata: {
    namespace,
    name,
    resourceVersion: version,
    ...(service ? { labels: { "kubernetes.io/service-name": service } } : {}),
  },
});
const names = (slices: V1EndpointSlice[]) => slices.map((s) => s.metadata!.name);

describe("the EndpointSlices of each Service", () => {
  test("are found by namespace and Service; another namespace's Service of that name has its own", () => {
    const index = new SliceIndex();
    index.put(slice("shop", "web-1", "web"));
    index.put(slice("shop", "web-2", "web"));
    index.put(slice("shop", "api-1", "api"));
    index.put(slice("bank", "web-1", "web"));
    index.put(slice("shop", "orphan"));
    expect(names(index.slicesFor("shop", "web"))).toEqual(["web-1", "web-2"]);
    expect(names(index.slicesFor("bank", "web"))).toEqual(["web-1"]);
    expect(names(index.slicesFor("shop", "nothing"))).toEqual([]);
  });

  test("an update replaces the slice in its place; a relabelled slice moves; a deleted one is gone", () => {
    const index = new SliceIndex();
    index.put(slice("shop", "web-1", "web"));
    index.put(slice("shop", "web-2", "web"));
    const updated = slice("shop", "web-1", "web", "2");
    index.put(updated);
    expect(index.slicesFor("shop", "web")[0]).toBe(updated);
    index.put(slice("shop", "web-2", "api"));
    expect(names(index.slicesFor("shop", "web"))).toEqual(["web-1"]);
    expect(names(index.slicesFor("shop", "api"))).toEqual(["web-2"]);
    index.put(slice("shop", "web-2"));
    expect(names(index.slicesFor("shop", "api"))).toEqual([]);
    index.remove(updated);
    index.remove(slice("shop", "never-seen", "web"));
    expect(names(index.slicesFor("shop", "web"))).toEqual([]);
  });
});

describe("a stable list", () => {
  test("is the same frozen array until told of a change, then read again", () => {
    let items = [1, 2];
    const list = new StableList(() => items);
    const first = list.list();
    expect(first).toEqual([1, 2]);
    items = [1, 2, 3];
    expect(list.list()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    list.changed();
    expect(list.list()).toEqual([1, 2, 3]);
    // What it read is copied, never frozen in place.
    expect(Object.isFrozen(items)).toBe(false);
  });
});
