// Endpoints change far more often than anything else about a Service. When the last full observation found the
// load balancer exactly as desired and only the targets differ now, a reconcile needs to read the targets alone
// (one DescribeTargetHealth per target group) instead of observing the whole load balancer again (~8 reads).
// The full observation stays the source of truth: an entry serves only the desired shape it was taken for, for
// `ttlMs` after it was taken (or last confirmed) as it is, and then until `confirmedTtlMs` only if the account's
// listings still show its load balancer and target groups unchanged (ElbIndex) — reuse never extends
// `confirmedTtlMs` — so drift made outside Portico is still found: where the listings show it, at the next pass that
// asks them (a background one past `ttlMs`; one a user waits for takes it as it is for longer: cacheAge.ts), within
// `confirmedTtlMs` where only a full observation can (listeners, attributes).
import { createHash } from "node:crypto";
import type { DesiredLoadBalancer, Observed } from "../model.ts";

interface Entry {
  shape: string;
  observed: Observed;
  takenAt: number;
  /** When listings last confirmed it (they show what they show as of then). */
  confirmedAt?: number;
}

export class RecentObservations {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly confirmedTtlMs: number;
  private readonly now: () => number;

  constructor(ttlMs: number, now: () => number = Date.now, confirmedTtlMs = ttlMs) {
    this.ttlMs = ttlMs;
    this.confirmedTtlMs = Math.max(ttlMs, confirmedTtlMs);
    this.now = now;
  }

  /**
   * The observation taken for this exact shape, if any is young enough: `confirm` says whether it must first be
   * confirmed by the listings (taken, or last confirmed, `confirmAfterMs` ago or more: `ttlMs` unless the caller
   * trusts it longer).
   */
  get(
    serviceUid: string,
    desired: DesiredLoadBalancer,
    confirmAfterMs = this.ttlMs,
  ): { observed: Observed; takenAt: number; confirm: boolean } | undefined {
    const entry = this.entries.get(serviceUid);
    if (!entry) return undefined;
    const now = this.now();
    const age = now - entry.takenAt;
    // One past its period stays, for `lastFull`, until the full observation that follows replaces it.
    if (age >= this.confirmedTtlMs || entry.shape !== shapeOf(desired)) return undefined;
    const seen = Math.max(entry.takenAt, entry.confirmedAt ?? entry.takenAt);
    return {
      observed: entry.observed,
      takenAt: entry.takenAt,
      confirm: now - seen >= Math.max(this.ttlMs, confirmAfterMs),
    };
  }

  /** The listings read at `at` showed the Service's observation as it was. */
  confirmed(serviceUid: string, at: number): void {
    const entry = this.entries.get(serviceUid);
    if (entry) entry.confirmedAt = Math.max(at, entry.confirmedAt ?? at);
  }

  /**
   * The last full observation for this shape at any age, for the next full observation to know what it may find
   * (the listeners it can read by ARN): never to stand for one.
   */
  lastFull(serviceUid: string, desired: DesiredLoadBalancer): Observed | undefined {
    const entry = this.entries.get(serviceUid);
    return entry?.shape === shapeOf(desired) ? entry.observed : undefined;
  }

  /** Remember a full observation that matched `desired` in everything but targets. */
  remember(serviceUid: string, desired: DesiredLoadBalancer, observed: Observed): void {
    // A TTL of 0 means observe every time, listings or not.
    if (this.ttlMs <= 0) return;
    this.entries.set(serviceUid, { shape: shapeOf(desired), observed, takenAt: this.now() });
  }

  forget(serviceUid: string): void {
    this.entries.delete(serviceUid);
  }

  clear(): void {
    this.entries.clear();
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
