import { describe, expect, it } from "vitest";
import type { V1Service } from "@kubernetes/client-node";
import { recordTag } from "../loadBalancer/loadBalancerEdit.ts";
import { frontendName } from "../names.ts";
import { clusterHolders } from "./holders.ts";

const uid = (n: number) => `0f0f0f0f-0000-4000-8000-${String(n).padStart(12, "0")}`;
const svc = (n: number, deleting = false): V1Service => ({
  metadata: {
    namespace: "shop",
    name: `svc-${n}`,
    uid: uid(n),
    ...(deleting ? { deletionTimestamp: new Date() } : {}),
  },
});

describe("the holders of a shared public IP, from the controller's cache", () => {
  const lb = { name: "lb", tags: { [recordTag(frontendName(uid(3)))]: "old/svc-3" } };
  const observed = { loadBalancers: [lb], publicIps: [] };

  it("tells a Service that exists from one being deleted and one that is gone, named as the cache has them", () => {
    const holders = clusterHolders({ list: () => [svc(1), svc(2, true)] }, observed);
    expect([1, 2, 3].map((n) => holders.state(uid(n)))).toEqual(["live", "deleting", "gone"]);
    expect(holders.name(uid(2))).toBe("shop/svc-2");
    // Gone from the cache: the load balancer's record still names it.
    expect(holders.name(uid(3))).toBe("old/svc-3");
  });

  it("without a view of the cluster, counts every Service as live, named by the load balancers' records", () => {
    const holders = clusterHolders(undefined, observed);
    expect(holders.state(uid(3))).toBe("live");
    expect(holders.name(uid(3))).toBe("old/svc-3");
  });

  it("lists the cluster's Services once, and only when asked", () => {
    let lists = 0;
    const holders = clusterHolders({ list: () => (lists++, [svc(1)]) }, observed);
    expect(lists).toBe(0);
    holders.state(uid(1));
    holders.state(uid(2));
    holders.name(uid(1));
    expect(lists).toBe(1);
  });
});
