// Optimistic, batched read-modify-write of resources many Services share (the cluster's load balancers and its
// network security group). Each write carries the etag of the version its edits were applied to, so it applies
// only if nobody wrote in between; when someone did (412), or ARM is still busy with the previous write (409),
// the edits are applied again to a fresh read. Within this process, edits of one resource queue up and go out
// together in one write, so a burst of Services costs a few writes rather than one each, and writes to
// different resources never wait for each other.
import { armError, classify } from "./clients.ts";
import { CloudError } from "../../errors.ts";

export interface Versioned {
  etag?: string;
  provisioningState?: string;
}

/** How to read, write and delete one resource. */
export interface ResourceAccess<T extends Versioned> {
  /** e.g. "loadBalancers" (names the operation in errors). */
  operation: string;
  get(): Promise<T | undefined>;
  put(body: T, condition: { ifMatch: string } | { ifNoneMatch: "*" }): Promise<T>;
  delete(ifMatch: string): Promise<void>;
}

/**
 * A pure edit: given the resource as read (undefined: absent), the resource as it should be. Returning the input
 * itself means "no change"; returning undefined for a present resource deletes it.
 */
export type Edit<T> = (current: T | undefined) => T | undefined;

/** A version of the resource seen at `at` (performance.now()), e.g. by the observation a plan was made from. */
export interface Seen<T> {
  value: T | undefined;
  at: number;
}

interface Pending<T extends Versioned> {
  edit: Edit<T>;
  resolve: (value: T | undefined) => void;
  reject: (err: unknown) => void;
}

interface Queue<T extends Versioned> {
  access: ResourceAccess<T>;
  pending: Pending<T>[];
  running: boolean;
  latest?: Seen<T>;
}

const RETRYABLE_CONFLICTS = new Set([
  "PreconditionFailed",
  "AnotherOperationInProgress",
  "RetryableError",
  "ReferencedResourceNotProvisioned",
  "CanceledAndSupersededDueToAnotherOperation",
  "OperationCanceled",
]);

/** How long a version this writer wrote or read is preferred to an older observation's (see `recent`). */
const RECENT_MS = 60_000;

export interface WriterOptions {
  maxAttempts?: number;
  /** Longest wait for a busy resource before reading it again. */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export class EtagWriter {
  private readonly queues = new Map<string, Queue<Versioned>>();
  private readonly maxAttempts: number;
  private readonly maxWaitMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  /**
   * The version each resource was left at by this writer's last write or read, kept a while after its queue
   * empties. Without it, the next Service's edit starts from the version its own observation saw, which, when that
   * observation began before the last write finished, is already stale: a PUT refused with 412 and a read to
   * learn what a write of this very process made. An older version than the one an edit brings is never used,
   * and a version someone else has since replaced only costs that same 412 and read.
   */
  private readonly recent = new Map<string, Seen<Versioned>>();
  /** Writes sent (PUT or DELETE), for tests and metrics: how well batching works. */
  writes = 0;

  constructor(opts: WriterOptions = {}) {
    this.maxAttempts = opts.maxAttempts ?? 12;
    this.maxWaitMs = opts.maxWaitMs ?? 5000;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Applies `edit` to resource `key` and resolves with the resource as written (undefined: deleted or absent). */
  submit<T extends Versioned>(
    key: string,
    access: ResourceAccess<T>,
    edit: Edit<T>,
    seen?: Seen<T>,
  ): Promise<T | undefined> {
    let queue = this.queues.get(key) as Queue<T> | undefined;
    if (!queue) {
      const recent = this.recent.get(key) as Seen<T> | undefined;
      queue = { access, pending: [], running: false, ...(recent ? { latest: recent } : {}) };
      this.queues.set(key, queue as unknown as Queue<Versioned>);
    }
    if (seen && (!queue.latest || queue.latest.at < seen.at)) queue.latest = seen;
    const q = queue;
    return new Promise<T | undefined>((resolve, reject) => {
      q.pending.push({ edit, resolve, reject });
      if (!q.running) void this.drain(key, q);
    });
  }

  private async drain<T extends Versioned>(key: string, q: Queue<T>): Promise<void> {
    q.running = true;
    try {
      while (q.pending.length) {
        const batch = q.pending.splice(0);
        try {
          const result = await this.commit(q, batch);
          batch.forEach((p) => p.resolve(result));
        } catch (err) {
          // One Service's edit that ARM refuses must not fail the others that happened to share its write.
          if (batch.length > 1 && !classify(q.access.operation, err).retryable) {
            for (const p of batch) await this.commit(q, [p]).then(p.resolve, p.reject);
          } else batch.forEach((p) => p.reject(err));
        }
      }
    } finally {
      q.running = false;
      if (!q.pending.length) {
        this.queues.delete(key);
        this.remember(key, q.latest);
      }
    }
  }

  private remember(key: string, latest: Seen<Versioned> | undefined): void {
    const now = performance.now();
    for (const [k, seen] of this.recent) if (now - seen.at > RECENT_MS) this.recent.delete(k);
    if (latest) this.recent.set(key, latest);
    else this.recent.delete(key);
  }

  private async commit<T extends Versioned>(q: Queue<T>, batch: Pending<T>[]): Promise<T | undefined> {
    const { access } = q;
    const read = async () => {
      const value = await access.get();
      q.latest = { value, at: performance.now() };
      return value;
    };
    let current = q.latest ? q.latest.value : await read();
    let edits = batch;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      if (current?.provisioningState === "Deleting") {
        await this.sleep(1000);
        current = await read();
        continue;
      }
      let next = current;
      const kept: Pending<T>[] = [];
      for (const p of edits) {
        try {
          next = p.edit(next);
          kept.push(p);
        } catch (err) {
          p.reject(err); // the edit itself refuses (e.g. a name taken): only its Service fails
        }
      }
      edits = kept;
      if (!edits.length || next === current) return current;
      try {
        this.writes++;
        let written: T | undefined;
        if (next === undefined) await access.delete(current!.etag ?? "");
        else
          written = await access.put(next, current ? { ifMatch: current.etag ?? "" } : { ifNoneMatch: "*" });
        q.latest = { value: written, at: performance.now() };
        return written;
      } catch (err) {
        delete q.latest;
        const info = armError(err);
        if (!RETRYABLE_CONFLICTS.has(info.code) && info.status !== 412) throw classify(access.operation, err);
        if (info.status !== 412) await this.sleep(Math.min(info.retryAfterMs ?? 1000, this.maxWaitMs));
        current = await read();
      }
    }
    throw new CloudError({
      operation: access.operation,
      code: "TooManyConflicts",
      message: `gave up after ${this.maxAttempts} conflicting writes; will try again`,
      retryable: true,
    });
  }
}
