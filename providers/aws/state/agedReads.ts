// The one way the cluster's shared reads are kept between passes. Each of them (subnets, the targets' groups,
// the VPC's CIDRs, prefix lists, the groups a Service names, certificates) is asked for by every Service, often by
// several passes at once, and changes rarely; reading it for each asker would multiply the account's calls and
// its throttling. So an answer is kept as the promise of its read: whoever asks while it is under way shares that
// one read, and whoever asks later takes it until it is too old. How old is too old is decided when asked, not
// when read, because it depends on who asks (cacheAge.ts: a background pass wants a newer copy than a pass a
// user waits for). A read that failed is not kept, so the next asker tries again rather than inheriting the
// failure; and a new leadership term forgets everything, since another leader may have acted in between.
import { clusterCacheMs } from "./cacheAge.ts";

export interface AgedReadsOptions {
  /**
   * The age, asked at each question, past which a kept answer is read again: clusterCacheMs() unless a reader
   * has a documented reason for another period.
   */
  maxAgeMs?: () => number;
  /** The clock (tests give their own). */
  now?: () => number;
}

interface Entry<V> {
  /** When its read began: an answer is never taken as newer than the request that fetched it. */
  at: number;
  value: Promise<V>;
}

/** Answers by key, each the promise of one read, kept while younger than the age asked for. */
export class AgedReads<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly maxAgeMs: () => number;
  private readonly now: () => number;

  constructor(opts: AgedReadsOptions = {}) {
    this.maxAgeMs = opts.maxAgeMs ?? clusterCacheMs;
    // Looked up at each call, so a clock faked after construction is the one used.
    this.now = opts.now ?? (() => Date.now());
  }

  /** The kept answer for `key` while it is young enough, else `read()`'s, kept for whoever asks next. */
  get(key: string, read: () => Promise<V>): Promise<V> {
    const now = this.now();
    return this.fresh(key, now, this.maxAgeMs()) ?? this.keep(key, now, call(read));
  }

  /**
   * The answers for several keys, those not young enough read together by one `read(stale)` (which answers each
   * of them): a batch asked about at once costs one read, and keys a read under way is fetching are shared.
   */
  async getMany(
    keys: readonly string[],
    read: (stale: string[]) => Promise<ReadonlyMap<string, V>>,
  ): Promise<Map<string, V>> {
    const now = this.now();
    const maxAge = this.maxAgeMs();
    const unique = [...new Set(keys)];
    const answers = new Map<string, Promise<V>>();
    const stale: string[] = [];
    for (const key of unique) {
      const kept = this.fresh(key, now, maxAge);
      if (kept) answers.set(key, kept);
      else stale.push(key);
    }
    if (stale.length) {
      const batch = call(() => read(stale));
      for (const key of stale) {
        const one = batch.then((all) => {
          if (!all.has(key)) throw new Error(`the read of ${stale.length} keys gave no answer for ${key}`);
          return all.get(key)!;
        });
        answers.set(key, this.keep(key, now, one));
      }
    }
    const values = await Promise.all(unique.map((key) => answers.get(key)!));
    return new Map(unique.map((key, i) => [key, values[i]!]));
  }

  /** Nothing kept is trusted any more: for one key, or (without one) for all. */
  forget(key?: string): void {
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }

  private fresh(key: string, now: number, maxAge: number): Promise<V> | undefined {
    const entry = this.entries.get(key);
    return entry && now - entry.at < maxAge ? entry.value : undefined;
  }

  private keep(key: string, at: number, value: Promise<V>): Promise<V> {
    this.entries.set(key, { at, value });
    // Only this read's own entry goes: one begun since (after a forget) is another asker's.
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}

/** A read that throws before it returns its promise fails the same way as one whose promise rejects. */
function call<T>(read: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(read()));
}
