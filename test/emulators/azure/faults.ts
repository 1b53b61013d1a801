// Fault injection, configured at runtime through POST /_emulator/faults: ARM's throttling (429 + Retry-After),
// transient 5xx errors, 409 AnotherOperationInProgress on writes, long-running operations that end Failed, and
// the network failing: answers held back (slow) and connections closed after the request was served, so the
// client never learns whether its write happened (drop). Each rule applies to the next `count` matching
// requests, or to a `rate` of them drawn from a seeded generator so that a run can be repeated exactly.
import { randomUUID } from "node:crypto";
import type { ArmError, ArmErrorDetail } from "./errors.ts";
import { anotherOperationInProgress, throttled, transientServerError } from "./errors.ts";

export const FAULT_KINDS = [
  "throttle",
  "serverError",
  "conflict",
  "operationFailure",
  "slow",
  "drop",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  /** HTTP methods the rule applies to; by default all for throttle/serverError, writes for conflict. */
  methods?: string[];
  /** Case-insensitive substring the request path must contain, e.g. "/loadBalancers/". */
  pathContains?: string;
  /** Applies to the next `count` matching requests, then the rule is spent (1 when neither count nor rate is set). */
  count?: number;
  /** Applies to each matching request with this probability (0-1). */
  rate?: number;
  /** throttle: the Retry-After the 429 carries (seconds, default 1). */
  retryAfterSeconds?: number;
  /** serverError: 500 (default), 502, 503 or 504. */
  status?: number;
  /** slow: how long the answer is held back (milliseconds, default 1500). */
  delayMs?: number;
}

/** What happens to the connection of a request that was served: its answer held back, or never sent. */
export interface ConnectionFault {
  kind: "slow" | "drop";
  delayMs: number;
}

interface ActiveRule extends FaultRule {
  remaining: number;
  injected: number;
}

const WRITE_METHODS = ["PUT", "PATCH", "DELETE", "POST"];

/** mulberry32: tiny, seedable, good enough to spread faults. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function validateFaultRule(input: unknown): FaultRule {
  const r = input as Partial<FaultRule> | null;
  if (!r || typeof r !== "object" || !FAULT_KINDS.includes(r.kind as FaultKind))
    throw new Error(`a fault needs "kind": one of ${FAULT_KINDS.join(", ")}`);
  if (r.rate !== undefined && (typeof r.rate !== "number" || r.rate < 0 || r.rate > 1))
    throw new Error('"rate" must be a number between 0 and 1');
  if (r.count !== undefined && (!Number.isInteger(r.count) || r.count < 1))
    throw new Error('"count" must be a positive integer');
  if (r.status !== undefined && ![500, 502, 503, 504].includes(r.status))
    throw new Error('"status" must be 500, 502, 503 or 504');
  if (r.delayMs !== undefined && (typeof r.delayMs !== "number" || r.delayMs < 0))
    throw new Error('"delayMs" must be a non-negative number');
  return r as FaultRule;
}

export class Faults {
  private rules: ActiveRule[] = [];
  private random: () => number;

  constructor(seed = 1) {
    this.random = seeded(seed);
  }

  add(rule: FaultRule): void {
    const remaining = rule.count ?? (rule.rate !== undefined ? Infinity : 1);
    this.rules.push({ ...rule, remaining, injected: 0 });
  }

  clear(seed?: number): void {
    this.rules = [];
    if (seed !== undefined) this.random = seeded(seed);
  }

  describe(): (FaultRule & { remaining: number | null; injected: number })[] {
    return this.rules.map((r) => ({ ...r, remaining: Number.isFinite(r.remaining) ? r.remaining : null }));
  }

  private take(kind: FaultKind, method: string, path: string): ActiveRule | undefined {
    for (const rule of this.rules) {
      if (rule.kind !== kind || rule.remaining <= 0) continue;
      const methods =
        rule.methods?.map((m) => m.toUpperCase()) ?? (kind === "conflict" ? WRITE_METHODS : undefined);
      if (methods && !methods.includes(method)) continue;
      if (rule.pathContains && !path.toLowerCase().includes(rule.pathContains.toLowerCase())) continue;
      if (rule.rate !== undefined && this.random() >= rule.rate) continue;
      rule.remaining--;
      rule.injected++;
      return rule;
    }
    return undefined;
  }

  /** The error to answer an ARM request with instead of serving it, if a rule says so. */
  forRequest(
    method: string,
    path: string,
    subscriptionId: string,
    operationUrl: (id: string) => string,
  ): ArmError | undefined {
    const t = this.take("throttle", method, path);
    if (t) return throttled(subscriptionId, `${method}${path.toUpperCase()}`, t.retryAfterSeconds ?? 1);
    const s = this.take("serverError", method, path);
    if (s) return transientServerError(s.status ?? 500);
    const c = this.take("conflict", method, path);
    if (c) return anotherOperationInProgress(operationUrl(randomUUID()));
    return undefined;
  }

  /** Whether the answer to a request just served is to be dropped or held back, if a rule says so. */
  forConnection(method: string, path: string): ConnectionFault | undefined {
    if (this.take("drop", method, path)) return { kind: "drop", delayMs: 0 };
    const s = this.take("slow", method, path);
    return s ? { kind: "slow", delayMs: s.delayMs ?? 1500 } : undefined;
  }

  /** The error a new long-running operation should end with, if a rule says so. */
  forOperation(method: string, path: string): ArmErrorDetail | undefined {
    return this.take("operationFailure", method, path)
      ? { code: "InternalServerError", message: "An error occurred." }
      : undefined;
  }
}
