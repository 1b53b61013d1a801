import { describe, expect, test } from "vitest";
import type { DesiredLoadBalancer, Observed } from "../model.ts";
import { RecentObservations, shapeOf } from "./recentObservations.ts";

const desired = (targets: string[], port = 80): DesiredLoadBalancer =>
  ({
    name: "k8s-ns-web-0123456789",
    scheme: "internal",
    subnets: ["subnet-a"],
    ipAddressType: "ipv4",
    attributes: {},
    tags: {},
    securityGroup: { name: "sg", description: "", vpcId: "vpc-1", ingress: [], tags: {} },
    listeners: [{ port, protocol: "TCP", certificateArns: [], targetGroupName: "tg" }],
    targetGroups: [
      {
        name: "tg",
        targets: targets.map((id) => ({ id, port: 8080 })),
      },
    ],
  }) as unknown as DesiredLoadBalancer;

const observed: Observed = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };

describe("RecentObservations", () => {
  test("the shape ignores targets and nothing else", () => {
    expect(shapeOf(desired(["10.0.0.1"]))).toBe(shapeOf(desired(["10.0.0.2", "10.0.0.3"])));
    expect(shapeOf(desired([]))).not.toBe(shapeOf(desired([], 443)));
  });

  test("an observation serves target-only changes of the same shape within the TTL", () => {
    let now = 1000;
    const recent = new RecentObservations(60_000, () => now);
    recent.remember("uid", desired(["10.0.0.1"]), observed);
    now += 59_999;
    expect(recent.get("uid", desired(["10.0.0.9"]))?.observed).toBe(observed);
    expect(recent.get("other", desired(["10.0.0.9"]))).toBeUndefined();
  });

  test("a different shape does not use it", () => {
    const recent = new RecentObservations(60_000, () => 0);
    recent.remember("uid", desired([]), observed);
    expect(recent.get("uid", desired([], 443))).toBeUndefined();
  });

  test("it expires TTL after it was taken, however often it was used", () => {
    let now = 0;
    const recent = new RecentObservations(1000, () => now);
    recent.remember("uid", desired([]), observed);
    for (now = 0; now < 1000; now += 250) expect(recent.get("uid", desired([]))?.observed).toBe(observed);
    now = 1000;
    expect(recent.get("uid", desired([]))).toBeUndefined();
  });

  test("past its period it serves no more, but tells the next full observation what it found", () => {
    let now = 0;
    const recent = new RecentObservations(1000, () => now, 5000);
    recent.remember("uid", desired(["10.0.0.1"]), observed);
    now = 5000;
    expect(recent.get("uid", desired(["10.0.0.1"]))).toBeUndefined();
    expect(recent.lastFull("uid", desired(["10.0.0.2"]))).toBe(observed);
    // Not for another shape (what it found may not be what the new one needs), nor once forgotten.
    expect(recent.lastFull("uid", desired([], 443))).toBeUndefined();
    recent.forget("uid");
    expect(recent.lastFull("uid", desired([]))).toBeUndefined();
    expect(recent.size).toBe(0);
  });

  test("past the TTL and until the confirmed TTL, it serves only once the listings confirm it", () => {
    let now = 5;
    const recent = new RecentObservations(1000, () => now, 60_000);
    recent.remember("uid", desired([]), observed);
    expect(recent.get("uid", desired([]))).toEqual({ observed, takenAt: 5, confirm: false });
    now = 1005;
    expect(recent.get("uid", desired([]))).toEqual({ observed, takenAt: 5, confirm: true });
    now = 60_004;
    expect(recent.get("uid", desired([]))?.confirm).toBe(true);
    now = 60_005;
    expect(recent.get("uid", desired([]))).toBeUndefined();
    // A confirmed TTL shorter than the TTL is the TTL.
    const short = new RecentObservations(1000, () => 0, 10);
    short.remember("uid", desired([]), observed);
    expect(short.get("uid", desired([]))?.confirm).toBe(false);
  });

  test("a caller may trust it longer before asking the listings; a confirmation counts from the listings' time", () => {
    let now = 0;
    const recent = new RecentObservations(1000, () => now, 60_000);
    recent.remember("uid", desired([]), observed);
    now = 5000;
    expect(recent.get("uid", desired([]))?.confirm).toBe(true);
    expect(recent.get("uid", desired([]), 10_000)?.confirm).toBe(false);
    // Never shorter than the TTL.
    expect(recent.get("uid", desired([]), 10)?.confirm).toBe(true);
    recent.confirmed("uid", 4500);
    expect(recent.get("uid", desired([]))?.confirm).toBe(false);
    now = 5500;
    expect(recent.get("uid", desired([]))?.confirm).toBe(true);
    // An older confirmation does not move it back; none extends the confirmed TTL.
    recent.confirmed("uid", 100);
    expect(recent.get("uid", desired([]), 2000)?.confirm).toBe(false);
    now = 60_000;
    recent.confirmed("uid", 59_999);
    expect(recent.get("uid", desired([]))).toBeUndefined();
  });

  test("forget drops it; a TTL of 0 never keeps one", () => {
    const recent = new RecentObservations(60_000, () => 0);
    recent.remember("uid", desired([]), observed);
    recent.forget("uid");
    expect(recent.get("uid", desired([]))).toBeUndefined();
    const never = new RecentObservations(0, () => 0);
    never.remember("uid", desired([]), observed);
    expect(never.size).toBe(0);
  });
});
