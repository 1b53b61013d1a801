// Writes the speaker's records (ServiceL2Status, planned by speaker/l2/statusPlan.ts; ServiceBGPStatus, by
// speaker/bgp/statusPlan.ts): creates a record (owned by its Service, so it goes with it) or overwrites it, and
// deletes the ones planned away. One request per record at a time; a plan repeated while
// its request is in flight adds nothing, and the next recompute after the watch has caught up re-plans from
// what the apiserver holds, so a failed write is retried by the level-triggered loop, not here.
import type { Logger } from "pino";
import { KubeApiError, resourcePath, type KubeApi } from "./api/client.ts";

const REWRITE_AFTER_MS = 30_000;
/**
 * Requests at once, the rest queued: a thousand Services first announced would otherwise open a thousand
 * connections to the apiserver from every speaker at the same moment.
 */
const MAX_IN_FLIGHT = 8;

/** What every record carries: its node and its Service. */
export interface RecordStatus {
  readonly node: string;
  readonly serviceName: string;
}

export interface DesiredRecord<S extends RecordStatus> {
  readonly name: string;
  readonly namespace: string;
  /** The Service owns its records: they go with it. */
  readonly serviceUid: string;
  readonly status: S;
}

export interface RecordPlan<S extends RecordStatus> {
  /** Records to create or overwrite (absent or different in the cache). */
  readonly write: DesiredRecord<S>[];
  readonly remove: { readonly name: string; readonly namespace: string }[];
}

/** A kind of record: where it lives, how it is labelled, and what of it decides a rewrite. */
export interface RecordKind<S extends RecordStatus> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly serviceLabel: string;
  readonly nodeLabel: string;
  fingerprint(status: S): string;
  /** The status as a merge patch: a merge patch keeps fields it does not name, so optional ones are nulled. */
  patch(status: S): Record<string, unknown>;
}

export class RecordWriter<S extends RecordStatus> {
  private readonly kind: RecordKind<S>;
  private readonly api: { group: string; version: string; plural: string };
  private readonly client: KubeApi;
  private readonly log: Logger;
  private readonly counted: (outcome: "created" | "updated" | "deleted" | "failed") => void;
  /** Record key → what is being written ("" for a delete). */
  private readonly inFlight = new Map<string, string>();
  /**
   * Record key → what was last written and when. The same again within REWRITE_AFTER_MS is skipped: should the
   * apiserver keep a record different from what was written (an older CRD pruning a field), the speaker would
   * otherwise rewrite it at every event its own write causes.
   */
  private readonly written = new Map<string, { what: string; at: number }>();
  private readonly waiting: (() => Promise<void>)[] = [];
  private running = 0;
  /** Called when a write failed, so the loop looks again later. */
  private readonly retry: () => void;

  constructor(
    kind: RecordKind<S>,
    api: KubeApi,
    log: Logger,
    counted: (outcome: "created" | "updated" | "deleted" | "failed") => void,
    retry: () => void,
  ) {
    this.kind = kind;
    this.api = { group: kind.group, version: kind.version, plural: kind.plural };
    this.client = api;
    this.log = log;
    this.counted = counted;
    this.retry = retry;
  }

  /** `cached`: the keys (namespace/name) of the records the cache holds; one missing there is always written. */
  apply(plan: RecordPlan<S>, cached: ReadonlySet<string> = new Set()): void {
    for (const record of plan.write) {
      const key = `${record.namespace}/${record.name}`;
      const what = this.kind.fingerprint(record.status);
      if (this.inFlight.get(key) === what) continue;
      const last = this.written.get(key);
      if (cached.has(key) && last?.what === what && Date.now() - last.at < REWRITE_AFTER_MS) continue;
      this.inFlight.set(key, what);
      this.run(() =>
        this.put(record)
          .then((ok) => {
            if (ok) this.written.set(key, { what, at: Date.now() });
          })
          .finally(() => {
            if (this.inFlight.get(key) === what) this.inFlight.delete(key);
          }),
      );
    }
    for (const { name, namespace } of plan.remove) {
      const key = `${namespace}/${name}`;
      if (this.inFlight.get(key) === "") continue;
      this.inFlight.set(key, "");
      this.written.delete(key);
      this.run(() =>
        this.remove(name, namespace).finally(() => {
          if (this.inFlight.get(key) === "") this.inFlight.delete(key);
        }),
      );
    }
  }

  /** Starts the request now, or once one of the MAX_IN_FLIGHT running ends. */
  private run(request: () => Promise<void>): void {
    this.waiting.push(request);
    this.pump();
  }

  private pump(): void {
    while (this.running < MAX_IN_FLIGHT && this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      this.running += 1;
      void next().finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  /** Whether the record now holds what was asked. */
  private async put(record: DesiredRecord<S>): Promise<boolean> {
    const { api, kind } = this;
    const body = {
      apiVersion: `${kind.group}/${kind.version}`,
      kind: kind.kind,
      metadata: {
        name: record.name,
        namespace: record.namespace,
        labels: {
          [kind.serviceLabel]: record.status.serviceName,
          [kind.nodeLabel]: record.status.node,
        },
        ownerReferences: [
          { apiVersion: "v1", kind: "Service", name: record.status.serviceName, uid: record.serviceUid },
        ],
      },
      status: record.status,
    };
    try {
      await this.client.create(resourcePath({ ...api, namespace: record.namespace }), body);
      this.counted("created");
      return true;
    } catch (err) {
      if (code(err) !== 409) {
        this.failed("write", record, err);
        return false;
      }
      try {
        // It exists (the cache had not seen it yet, or it holds something else): overwrite the status.
        await this.client.mergePatch(
          resourcePath({ ...api, namespace: record.namespace, name: record.name }),
          {
            status: kind.patch(record.status),
          },
        );
        this.counted("updated");
        return true;
      } catch (err2) {
        this.failed("update", record, err2);
        return false;
      }
    }
  }

  private async remove(name: string, namespace: string): Promise<void> {
    try {
      await this.client.delete(resourcePath({ ...this.api, namespace, name }));
      this.counted("deleted");
    } catch (err) {
      if (code(err) === 404) return;
      this.failed("delete", { name, namespace }, err);
    }
  }

  private failed(what: string, record: { name: string; namespace: string }, err: unknown): void {
    this.counted("failed");
    const status = code(err);
    this.log.warn(
      {
        record: `${record.namespace}/${record.name}`,
        err:
          status === 403 ? "forbidden: apply the speaker's RBAC (manifests/speaker/rbac.yaml)" : errText(err),
      },
      `could not ${what} the ${this.kind.kind} record`,
    );
    setTimeout(this.retry, 2000).unref();
  }
}

function code(err: unknown): number | undefined {
  return err instanceof KubeApiError ? err.code : undefined;
}

function errText(err: unknown): string {
  return (err as Error)?.message ?? String(err);
}
