/**
 * A keyed work queue with the semantics of client-go's workqueue: a key is queued at most once however often
 * it is added, a key is never handed to two workers at once, and failures back off exponentially per key.
 * Keys are object references (`namespace/name`), never objects: a handler always reads the latest state, so
 * coalescing many changes into one run loses nothing.
 *
 * Two lanes: keys added for a change someone waits for are handed out before keys added as background work
 * (the periodic resync, a look again that nothing asked for). One FIFO made an EndpointSlice change wait behind
 * every Service's resync or traffic poll queued before it — a thousand of them at once after a restart.
 */

export interface WorkQueueOptions {
  /** First retry delay after a failure; doubles with every further failure of the same key. */
  baseDelayMs?: number;
  /** Upper bound of the retry delay. */
  maxDelayMs?: number;
}

const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 300_000;

interface DelayedAdd {
  readyAt: number;
  timer: NodeJS.Timeout;
  background: boolean;
}

export class WorkQueue {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  /** Keys that need processing: waiting in `ready`, or being processed and to be queued again when done. */
  private readonly dirty = new Set<string>();
  /** Keys handed out by get() and not yet done(). */
  private readonly processing = new Set<string>();
  /** Keys ready to be handed out, oldest first (a Set keeps insertion order): changes, then background work. */
  private readonly ready = new Set<string>();
  private readonly readyBackground = new Set<string>();
  /** Keys (waiting, or to be queued again when done) that only background adds asked for. */
  private readonly background = new Set<string>();
  /** Keys being processed that were handed out from the background lane. */
  private readonly takenBackground = new Set<string>();
  private readonly delayed = new Map<string, DelayedAdd>();
  private readonly failureCounts = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.maxDelayMs = opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  }

  /**
   * Queues `key` unless it is already waiting; a key being processed is queued again once it is done.
   * `background`: nothing waits for this pass, so keys added for changes go first; a change to a key already
   * waiting as background work moves it to the changes' lane (and a background add never moves it back).
   */
  add(key: string, background = false): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) {
      if (background || !this.background.delete(key)) return;
      if (this.readyBackground.delete(key)) {
        this.ready.add(key);
        this.wakeOne();
      }
      return;
    }
    this.dirty.add(key);
    if (background) this.background.add(key);
    if (this.processing.has(key)) return;
    (background ? this.readyBackground : this.ready).add(key);
    this.wakeOne();
  }

  /** Whether `key`, handed out by get() and not yet done(), was asked for by background adds alone. */
  takenAsBackground(key: string): boolean {
    return this.takenBackground.has(key);
  }

  /** Whether `key` is waiting to be processed (not counting delayed adds). */
  waiting(key: string): boolean {
    return this.dirty.has(key);
  }

  /**
   * Adds `key` after `delayMs` (in the lane `background` names). If the key already has a pending delayed add,
   * the sooner of the two wins.
   */
  addAfter(key: string, delayMs: number, background = false): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key, background);
      return;
    }
    const readyAt = performance.now() + delayMs;
    const pending = this.delayed.get(key);
    if (pending) {
      if (pending.readyAt <= readyAt) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key, background);
    }, delayMs);
    this.delayed.set(key, { readyAt, timer, background });
  }

  /**
   * Adds `key` after its backoff (base * 2^failures, capped at the maximum) and counts one more failure; a
   * failed background pass is retried as background work.
   */
  addRateLimited(key: string, background = false): void {
    if (this.shuttingDown) return;
    const failures = this.failures(key);
    this.failureCounts.set(key, failures + 1);
    this.addAfter(key, Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs), background);
  }

  /** Resets the failure count of `key`, so its next failure backs off from the base delay again. */
  forget(key: string): void {
    this.failureCounts.delete(key);
  }

  failures(key: string): number {
    return this.failureCounts.get(key) ?? 0;
  }

  /** How long until the delayed add of `key` is due, or undefined if it has none. */
  dueInMs(key: string): number | undefined {
    const pending = this.delayed.get(key);
    return pending && Math.max(0, pending.readyAt - performance.now());
  }

  /**
   * Waits for a ready key and marks it as being processed; the caller must call done() with it. Resolves
   * undefined once the queue is shut down and no key is ready, or when `signal` aborts (no key is taken
   * then).
   */
  async get(signal?: AbortSignal): Promise<string | undefined> {
    for (;;) {
      if (signal?.aborted) {
        // This caller may have been woken for a ready key it now leaves behind: pass the wake-up on.
        if (this.length > 0) this.wakeOne();
        return undefined;
      }
      const key = this.ready.values().next();
      const next = key.done ? this.readyBackground.values().next() : key;
      if (!next.done) {
        this.ready.delete(next.value);
        this.readyBackground.delete(next.value);
        this.dirty.delete(next.value);
        if (this.background.delete(next.value)) this.takenBackground.add(next.value);
        this.processing.add(next.value);
        return next.value;
      }
      if (this.shuttingDown) return undefined;
      await this.waitForChange(signal);
    }
  }

  /** Marks `key` as processed; if it was added meanwhile, it is queued again now (in the lane it was added to). */
  done(key: string): void {
    if (!this.processing.delete(key)) return;
    this.takenBackground.delete(key);
    if (this.shuttingDown) {
      // Nothing enters the queue after shutdown; a level-triggered owner finds the change again on restart.
      this.dirty.delete(key);
      this.background.delete(key);
      return;
    }
    if (this.dirty.has(key)) {
      (this.background.has(key) ? this.readyBackground : this.ready).add(key);
      this.wakeOne();
    }
  }

  /**
   * Stops accepting keys and cancels all delayed adds, so no timer keeps the process alive. Keys already
   * ready are still handed out; every get() resolves undefined once none is left.
   */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** Keys ready to be processed now (not counting delayed ones or ones being processed). */
  get length(): number {
    return this.ready.size + this.readyBackground.size;
  }

  private wakeOne(): void {
    const wake = this.waiters.values().next();
    if (wake.done) return;
    this.waiters.delete(wake.value);
    wake.value();
  }

  private waitForChange(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

export type HandlerResult = { requeueAfterMs?: number } | void;

export interface WorkerOptions {
  workers: number;
  /**
   * Processes one key. Resolving forgets the key's failures (and schedules it again after `requeueAfterMs` if
   * set, as background work: nothing new asked for that look); throwing or rejecting retries it with backoff, in
   * the lane it came from. `signal` aborts when the workers are stopped; `lane.background` says whether only
   * background work asked for this pass.
   */
  handle: (key: string, signal: AbortSignal, lane: { background: boolean }) => Promise<HandlerResult>;
  /** Called with every failure, before the key is queued again with backoff. */
  onError?: (key: string, err: unknown) => void;
}

export interface Workers {
  /**
   * Stops taking keys and resolves once every handler in flight has finished. The queue itself stays open.
   */
  stop(): Promise<void>;
}

/**
 * Runs `workers` loops that take keys from `queue` and hand them to `handle`. Distinct keys run concurrently;
 * one key never runs twice at once, because the queue does not hand out a key until done() is called for it.
 * The loops also end by themselves once the queue is shut down and drained.
 */
export function startWorkers(queue: WorkQueue, opts: WorkerOptions): Workers {
  const stopping = new AbortController();
  const { signal } = stopping;

  const runOne = async (key: string): Promise<void> => {
    const background = queue.takenAsBackground(key);
    try {
      const result = await opts.handle(key, signal, { background });
      queue.forget(key);
      if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs, true);
    } catch (err) {
      try {
        opts.onError?.(key, err);
      } catch {
        // A failing error reporter must neither stop this worker nor lose the retry below.
      }
      queue.addRateLimited(key, background);
    } finally {
      queue.done(key);
    }
  };

  const loop = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get(signal);
      if (key === undefined) return;
      await runOne(key);
    }
  };

  const loops = Array.from({ length: opts.workers }, loop);
  return {
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}
