// Endpoints change far more often than anything else about a Service. When the last full observation found the
// load balancer exactly as desired and only the targets differ now, a reconcile needs to read the targets alone
// (one DescribeTargetHealth per target group) instead of observing the whole load balancer again (~8 reads).
// The full observation stays the source of truth: an entry serves only the desired shape it was taken for and
// only for `ttlMs` after it was taken (reuse does not extend it), so drift made outside Portico is still found
// within that time by whichever reconcile comes next.
import { createHash } from "node:crypto";
import type { DesiredLoadBalancer, Observed } from "./model.ts";

interface Entry {
  shape: string;
  observed: Observed;
  takenAt: number;
}

export class RecentObservations {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The observation taken for this exact shape less than `ttlMs` ago, if any. */
  get(serviceUid: string, desired: DesiredLoadBalancer): Observed | undefined {
    const entry = this.entries.get(serviceUid);
    if (!entry) return undefined;
    if (this.now() - entry.takenAt >= this.ttlMs) {
      this.entries.delete(serviceUid);
      return undefined;
    }
    return entry.shape === shapeOf(desired) ? entry.observed : undefined;
  }

  /** Remember a full observation that matched `desired` in everything but targets. */
  remember(serviceUid: string, desired: DesiredLoadBalancer, observed: Observed): void {
    if (this.ttlMs <= 0) return;
    this.entries.set(serviceUid, { shape: shapeOf(desired), observed, takenAt: this.now() });
  }

  forget(serviceUid: string): void {
    this.entries.delete(serviceUid);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Everything desired except the targets, as a digest (the desired load balancer is plain, ordered data). */
export function shapeOf(desired: DesiredLoadBalancer): string {
  const withoutTargets = {
    ...desired,
    targetGroups: desired.targetGroups.map((tg) => ({ ...tg, targets: [] })),
  };
  return createHash("sha256").update(JSON.stringify(withoutTargets)).digest("base64url");
}
