// What each Service's last pass left of the security rules Portico makes for it, for the security-rule check that
// compares them with the cloud about once a minute (LoadBalancerProvider.checkSecurityRules): a rule revoked or
// changed by hand cuts clients off, or lets others in, until something looks. Each provider keeps one, holding
// its own description of the rules, and says how a read of the cloud differs from them.
//
// Only what Portico knows it finished writing is compared: a Service whose rules are being written, or were
// written after the read began, is left for the next check, so Portico's own writes are never taken for someone
// else's. A difference its pass may not be able to mend (AWS: an equal rule someone else made answers
// "duplicate", and Portico leaves that one alone) is told once and again only every SAME_AGAIN_MS while it lasts,
// rather than sending the Service to a pass every minute; one its pass surely mends, found again after a pass
// wrote the rules, was made again and is told at once.
import type { ServiceRef } from "./provider.ts";

/** How long a difference its pass may not mend goes untold again (the periodic resync's default period). */
export const SAME_AGAIN_MS = 600_000;

/** One way the rules found differ from those held; `mendable`: the Service's pass surely restores it. */
export interface RuleDifference {
  text: string;
  mendable: boolean;
}

interface Entry<Held> {
  service: ServiceRef;
  held: Held;
  digest: string;
  /** When Portico last finished writing (or may have written) the Service's rules: older reads do not show it. */
  since: number;
  /** Each difference told, when, and whether the Service's pass surely restores it. */
  told: Map<string, { at: number; mendable: boolean }>;
}

export class SecurityRuleRecords<Held> {
  private readonly entries = new Map<string, Entry<Held>>();
  /** Writes of each Service's rules under way. */
  private readonly writes = new Map<string, number>();
  /** When each Service's last write of its rules ended, until its pass says what it left. */
  private readonly wrote = new Map<string, number>();
  /** The clock the provider's reads are timed by. */
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  get size(): number {
    return this.entries.size;
  }

  serviceOf(uid: string): ServiceRef | undefined {
    return this.entries.get(uid)?.service;
  }

  /** Portico starts writing the Service's rules; call the function returned once the writes are over. */
  writing(uid: string): () => void {
    this.writes.set(uid, (this.writes.get(uid) ?? 0) + 1);
    return () => {
      const left = (this.writes.get(uid) ?? 1) - 1;
      if (left > 0) this.writes.set(uid, left);
      else this.writes.delete(uid);
      this.wrote.set(uid, this.now());
    };
  }

  /** The Service's pass went through: these rules (plain data) are in place now. */
  held(service: ServiceRef, held: Held): void {
    const digest = JSON.stringify(held);
    const before = this.entries.get(service.uid);
    const same = before?.digest === digest;
    const wrote = this.wrote.get(service.uid);
    const told = new Map(same ? before.told : []);
    // The pass wrote the rules: what it surely restores, if found different again, was changed again.
    if (wrote !== undefined) for (const [text, t] of told) if (t.mendable) told.delete(text);
    this.entries.set(service.uid, {
      service,
      held,
      digest,
      // Rules asked for differently may have been put in place by this pass without a write being seen here.
      since: Math.max(same ? before.since : this.now(), wrote ?? -Infinity),
      told,
    });
    this.wrote.delete(service.uid);
  }

  /** Nothing is known to be in place for the Service (a pass failed, or it was deleted). */
  forget(uid: string): void {
    this.entries.delete(uid);
    this.wrote.delete(uid);
  }

  /** A new leadership term: another leader may have changed every Service's rules since. */
  clear(): void {
    this.entries.clear();
    this.wrote.clear();
  }

  /**
   * The Services whose rules, in a read begun at `readAt`, differ from those they hold (`differences` says how),
   * each with its differences, when one of them is new to tell.
   */
  drifted(
    readAt: number,
    differences: (held: Held, service: ServiceRef) => RuleDifference[],
  ): { service: ServiceRef; differences: string[] }[] {
    const out: { service: ServiceRef; differences: string[] }[] = [];
    for (const e of this.entries.values()) {
      if (this.writes.has(e.service.uid) || e.since >= readAt) continue;
      const found = differences(e.held, e.service);
      const at = this.now();
      const current = new Set(found.map((d) => d.text));
      for (const text of e.told.keys()) if (!current.has(text)) e.told.delete(text);
      const fresh = found.some((d) => {
        const t = e.told.get(d.text);
        return !t || at - t.at >= SAME_AGAIN_MS;
      });
      if (!fresh) continue;
      for (const d of found) e.told.set(d.text, { at, mendable: d.mendable });
      out.push({ service: e.service, differences: found.map((d) => d.text) });
    }
    return out;
  }
}
