import { ApiException, type CoordinationV1Api, type V1Lease } from "@kubernetes/client-node";
import {
  acquiredSpec,
  boundedRequest,
  describeError,
  releasedSpec,
  renewedSpec,
  withSpec,
} from "./leaseRecord.ts";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 *
 * - A candidate takes the Lease when it does not exist, when it names no holder, or when it has expired.
 *   Expiry is judged by this process's own monotonic clock: the Lease is expired once its record has not
 *   changed for leaseDurationSeconds since this process last saw it change. The remote renewTime is never
 *   compared with the local clock, so clock skew between replicas cannot make two of them lead.
 * - Every write carries the resourceVersion it was based on; a 409 Conflict means another replica wrote
 *   first.
 * - The leader renews every retryPeriod. If no renewal has succeeded for renewDeadline (counted from the
 *   moment the last successful write was sent), it steps down at once, even with a request still in flight.
 *   Since renewDeadline < leaseDuration and others count leaseDuration from when they saw that same write,
 *   the old leader has stopped before anyone else can take over.
 */

export interface LeaderElectionOptions {
  coordination: CoordinationV1Api;
  namespace: string;
  name: string;
  /**
   * Unique per process (e.g. pod name plus a random suffix): a process that finds its identity on a valid
   * Lease resumes it.
   */
  identity: string;
  /**
   * How long others wait, after last seeing the Lease change, before taking it. Written as whole seconds,
   * rounded up.
   */
  leaseDurationMs?: number;
  /** How long the leader keeps leading without a successful renewal. Must be less than leaseDurationMs. */
  renewDeadlineMs?: number;
  /** How often the leader renews and a candidate retries. Must be less than renewDeadlineMs. */
  retryPeriodMs?: number;
  /** On stop(), clear the holder so another replica takes over at once instead of after leaseDuration. */
  releaseOnStop?: boolean;
  /** Written on the Lease by whoever holds it: what the leader wants tools to know (its settings). */
  annotations?: Record<string, string>;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface LeaderCallbacks {
  /**
   * Called when this replica becomes leader. `signal` aborts when leadership is lost or stop() is called. If
   * it returns a promise, that promise must settle once the work has stopped after the abort: stop() then
   * releases the Lease only after it settled, and a replica that lost leadership campaigns again only after
   * it settled, so the work of two terms never overlaps.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /**
   * Called once per term, after the signal aborted: on loss right away, on stop() after the Lease is
   * released.
   */
  onStoppedLeading(): void;
  /** Called whenever the Lease is seen with a new (non-empty) holder, this replica included. */
  onNewLeader?(identity: string): void;
}

const DEFAULT_LEASE_DURATION_MS = 15_000;
const DEFAULT_RENEW_DEADLINE_MS = 10_000;
const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** The outcome of one attempt to acquire or renew. */
type Attempt = "held" | "heldByOther" | "failed";

interface Observation {
  lease: V1Lease;
  /** The record as last seen; a different one means the holder (or someone) wrote to the Lease. */
  record: string;
  /** Local monotonic time at which the record was first seen in this form. */
  changedAt: number;
}

export class LeaderElector {
  private readonly coordination: CoordinationV1Api;
  private readonly namespace: string;
  private readonly name: string;
  private readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly releaseOnStop: boolean;
  private readonly annotations: Record<string, string> | undefined;
  private readonly logger: (msg: string, fields?: Record<string, unknown>) => void;

  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private observed: Observation | undefined;
  private reportedLeader = "";
  /** The last write of ours succeeded and nothing since says otherwise. */
  private holding = false;
  /** When the last successful write of ours was sent (local monotonic time). */
  private renewedAt = 0;
  private leading = false;
  /** Aborts the current term's leadership signal. */
  private term: AbortController | undefined;
  private onNewLeader: ((identity: string) => void) | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.coordination = opts.coordination;
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.identity = opts.identity;
    this.leaseDurationMs = opts.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = opts.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    this.releaseOnStop = opts.releaseOnStop ?? true;
    this.annotations = opts.annotations;
    const log = opts.log;
    this.logger = (msg, fields) =>
      log?.(msg, { lease: `${this.namespace}/${this.name}`, identity: this.identity, ...fields });
    if (!this.identity) throw new Error("leader election needs a non-empty identity");
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs)) {
      throw new Error(
        `leader election needs leaseDuration > renewDeadline > retryPeriod, got ${this.leaseDurationMs}ms, ` +
          `${this.renewDeadlineMs}ms, ${this.retryPeriodMs}ms`,
      );
    }
  }

  /** True while this replica holds the Lease and its leadership signal has not aborted. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Campaigns, leads, and campaigns again after a loss, until stop(). */
  run(cb: LeaderCallbacks): Promise<void> {
    if (this.running) throw new Error("LeaderElector.run() may be called only once");
    this.onNewLeader = cb.onNewLeader?.bind(cb);
    this.running = this.campaign(cb);
    return this.running;
  }

  /** Ends the current term (releasing the Lease if configured) and resolves when run() has finished. */
  async stop(): Promise<void> {
    this.stopping.abort();
    // The term ends now, not when the loop notices: no work may go on once stop() was called.
    this.endTerm(this.term, new Error("leader election stopped"));
    await this.running;
  }

  private async campaign(cb: LeaderCallbacks): Promise<void> {
    while (await this.acquire()) await this.lead(cb);
  }

  /** Retries every retryPeriod until the Lease is ours (true) or stop() was called (false). */
  private async acquire(): Promise<boolean> {
    for (;;) {
      if (this.stopping.signal.aborted) return false;
      if ((await this.tryAcquireOrRenew(this.stopping.signal)) === "held") {
        if (!this.stopping.signal.aborted) return true;
        // Acquired while being stopped: never start leading, but do not leave others waiting either.
        await this.release();
        return false;
      }
      await sleep(this.retryPeriodMs, this.stopping.signal);
    }
  }

  /** One leadership term; returns once it is over and its work has settled. */
  private async lead(cb: LeaderCallbacks): Promise<void> {
    if (this.stopping.signal.aborted) {
      // stop() came between acquiring and leading: start nothing.
      await this.release();
      return;
    }
    const term = new AbortController();
    this.term = term;
    this.leading = true;
    this.logger("became leader");
    const work = this.startWork(cb, term.signal);
    const endRenewals = new AbortController();
    const renewals = this.keepRenewing(term, endRenewals.signal);

    await abortedPromise(term.signal);
    if (term.signal.reason instanceof LeadershipLost) {
      // The Lease may already be someone else's: say so at once, then wait for the work before campaigning
      // again.
      this.notify(() => cb.onStoppedLeading());
      endRenewals.abort();
      await renewals;
      await work;
      return;
    }

    // stop() ended the term: keep renewing until the work has settled, then hand the Lease over.
    const lostWhileDraining = await Promise.race([renewals, work.then(() => undefined)]);
    endRenewals.abort();
    const lost = lostWhileDraining ?? (await renewals);
    await work;
    if (!lost) await this.release();
    this.notify(() => cb.onStoppedLeading());
  }

  /**
   * Renews every retryPeriod until `until` aborts (resolves undefined) or leadership is lost (resolves the
   * reason). On loss, `term` aborts and isLeader turns false synchronously, at the deadline itself.
   */
  private async keepRenewing(term: AbortController, until: AbortSignal): Promise<string | undefined> {
    let lossReason: string | undefined;
    const lost = new AbortController();
    const lose = (reason: string): void => {
      if (lossReason) return;
      lossReason = reason;
      this.holding = false;
      this.endTerm(term, new LeadershipLost(reason));
      lost.abort();
      this.logger("lost leadership", { reason });
    };
    let deadline: NodeJS.Timeout | undefined;
    const expire = (): void => lose(`no successful renewal within ${this.renewDeadlineMs}ms`);
    const armDeadline = (): void => {
      clearTimeout(deadline);
      const remaining = this.renewedAt + this.renewDeadlineMs - performance.now();
      if (remaining <= 0) expire();
      else deadline = setTimeout(expire, remaining);
    };

    const done = AbortSignal.any([lost.signal, until]);
    armDeadline();
    try {
      while (!done.aborted) {
        await sleep(this.retryPeriodMs, done);
        if (done.aborted) break;
        const attempt = await this.tryAcquireOrRenew(done);
        // A renewal that succeeds after the deadline fired must not revive the term.
        if (lost.signal.aborted) break;
        if (attempt === "held") armDeadline();
        else if (attempt === "heldByOther") {
          lose(`the Lease is held by ${this.observed?.lease.spec?.holderIdentity || "nobody"}`);
        }
      }
    } finally {
      clearTimeout(deadline);
    }
    return lossReason;
  }

  /** Ends a term once; the first reason (loss or stop) is the one its signal carries. */
  private endTerm(term: AbortController | undefined, reason: Error): void {
    if (!term || term.signal.aborted) return;
    if (this.term === term) this.leading = false;
    term.abort(reason);
  }

  private async startWork(cb: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    try {
      await cb.onStartedLeading(signal);
    } catch (err) {
      this.logger("leader work failed", { error: describeError(err) });
    }
  }

  /**
   * One round of client-go's tryAcquireOrRenew. A leader first writes optimistically on top of its own last
   * write; if that fails, everyone reads the Lease and decides from what it says.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const attemptedAt = performance.now();
    const observed = this.observed;
    if (this.holding && observed) {
      const renewed = await this.write("renew", () =>
        this.coordination.replaceNamespacedLease(
          {
            name: this.name,
            namespace: this.namespace,
            body: withSpec(
              observed.lease,
              renewedSpec(this.identity, this.leaseDurationMs, observed.lease),
              this.annotations,
            ),
          },
          boundedRequest(this.renewDeadlineMs, signal),
        ),
      );
      if (renewed) return this.wrote(renewed, attemptedAt);
    }

    let current: V1Lease;
    try {
      current = await this.coordination.readNamespacedLease(
        { name: this.name, namespace: this.namespace },
        boundedRequest(this.renewDeadlineMs, signal),
      );
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) {
        this.logger("reading the Lease failed", { error: describeError(err) });
        return "failed";
      }
      const created = await this.write("create", () =>
        this.coordination.createNamespacedLease(
          {
            namespace: this.namespace,
            body: {
              metadata: {
                name: this.name,
                namespace: this.namespace,
                ...(this.annotations ? { annotations: this.annotations } : {}),
              },
              spec: acquiredSpec(this.identity, this.leaseDurationMs, undefined),
            },
          },
          boundedRequest(this.renewDeadlineMs, signal),
        ),
      );
      return created ? this.wrote(created, attemptedAt) : "failed";
    }

    this.observe(current, performance.now());
    const holder = current.spec?.holderIdentity ?? "";
    if (this.holding) {
      // A leader whose own write failed finds someone else's record (or none): someone wrote over it.
      if (holder !== this.identity) return "heldByOther";
    } else if (holder && holder !== this.identity && !this.observedExpired(attemptedAt)) {
      return "heldByOther";
    }
    const spec =
      holder === this.identity
        ? renewedSpec(this.identity, this.leaseDurationMs, current)
        : acquiredSpec(this.identity, this.leaseDurationMs, current);
    const written = await this.write(holder === this.identity ? "renew" : "take over", () =>
      this.coordination.replaceNamespacedLease(
        { name: this.name, namespace: this.namespace, body: withSpec(current, spec, this.annotations) },
        boundedRequest(this.renewDeadlineMs, signal),
      ),
    );
    return written ? this.wrote(written, attemptedAt) : "failed";
  }

  /**
   * Clears the holder so that another replica takes over at once; best effort, as the Lease expires anyway.
   */
  private async release(): Promise<void> {
    if (!this.holding || !this.releaseOnStop) {
      this.holding = false;
      return;
    }
    this.holding = false;
    const signal = AbortSignal.timeout(this.renewDeadlineMs);
    let lease = this.observed?.lease;
    // Two tries: the first may conflict with our own last renewal if it landed after all (its response lost).
    for (let attempt = 0; lease && attempt < 2; attempt++) {
      const base: V1Lease = lease;
      const released = await this.write("release", () =>
        this.coordination.replaceNamespacedLease(
          { name: this.name, namespace: this.namespace, body: withSpec(base, releasedSpec(base)) },
          boundedRequest(this.renewDeadlineMs, signal),
        ),
      );
      if (released) {
        this.observe(released, performance.now());
        this.logger("released the Lease");
        return;
      }
      const latest = await this.coordination
        .readNamespacedLease(
          { name: this.name, namespace: this.namespace },
          boundedRequest(this.renewDeadlineMs, signal),
        )
        .catch(() => undefined);
      lease = latest?.spec?.holderIdentity === this.identity ? latest : undefined;
    }
  }

  private async write(what: string, request: () => Promise<V1Lease>): Promise<V1Lease | undefined> {
    try {
      return await request();
    } catch (err) {
      const conflict = err instanceof ApiException && (err.code === 409 || err.code === 404);
      this.logger(conflict ? `${what}: another replica wrote first` : `${what} failed`, {
        error: describeError(err),
      });
      return undefined;
    }
  }

  private wrote(lease: V1Lease, sentAt: number): Attempt {
    this.observe(lease, sentAt);
    this.holding = true;
    this.renewedAt = sentAt;
    return "held";
  }

  private observe(lease: V1Lease, at: number): void {
    const record = JSON.stringify(lease.spec ?? {});
    if (this.observed?.record !== record) {
      this.observed = { lease, record, changedAt: at };
    } else {
      this.observed = { ...this.observed, lease };
    }
    const holder = lease.spec?.holderIdentity ?? "";
    if (holder && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      this.logger("new leader observed", { leader: holder });
      this.notify(() => this.onNewLeader?.(holder));
    }
  }

  private observedExpired(now: number): boolean {
    if (!this.observed) return true;
    const seconds = this.observed.lease.spec?.leaseDurationSeconds;
    const durationMs = seconds && seconds > 0 ? seconds * 1000 : this.leaseDurationMs;
    return now >= this.observed.changedAt + durationMs;
  }

  private notify(callback: () => void): void {
    try {
      callback();
    } catch (err) {
      this.logger("leader election callback failed", { error: describeError(err) });
    }
  }
}

/** The abort reason of a term that ended because the Lease could not be kept. */
export class LeadershipLost extends Error {
  override name = "LeadershipLost";
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Resolves (with undefined) when `signal` aborts; never rejects. */
function abortedPromise(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}
