// Events on Services, as `kubectl describe service` shows them, written the same way by both programs over
// whichever Kubernetes client each uses. The controller counts repeats of the same event on one Event object (as
// client-go's recorder does) instead of flooding the namespace; the speaker, whose events already change only when
// an announcement does, writes each as its own Event and needs no right to patch Events.
import { createHash, randomBytes } from "node:crypto";
import type { V1Service } from "@kubernetes/client-node";
import type { Logger } from "./log.ts";

export type EventType = "Normal" | "Warning";

export interface EventSink {
  record(svc: V1Service, type: EventType, reason: string, message: string): Promise<void>;
}

/** The two calls an event writer makes, over the program's own client; errors carry the HTTP status as `code`. */
export interface EventApi {
  create(namespace: string, body: object): Promise<unknown>;
  mergePatch(namespace: string, name: string, body: object): Promise<unknown>;
}

export interface EventSource {
  component: string;
  /** The node the writer runs on (the speaker's), shown as the Event's host and reporting instance. */
  host?: string;
  /** Count repeats on one Event (needs the right to patch Events) rather than writing each anew. */
  aggregate: boolean;
}

const EVENT_TTL_MS = 60 * 60 * 1000;
const SWEEP_EVERY_MS = 10 * 60 * 1000;
/** The apiserver refuses a longer message. */
const MAX_MESSAGE = 1024;

export class EventRecorder implements EventSink {
  private readonly api: EventApi;
  private readonly source: EventSource;
  private readonly log: Logger;
  /** Event name → how often it was recorded and when last; forgotten once the apiserver has let it expire. */
  private readonly counts = new Map<string, { count: number; at: number }>();
  private sweptAt = Date.now();

  constructor(api: EventApi, log: Logger, source: EventSource) {
    this.api = api;
    this.log = log;
    this.source = source;
  }

  async record(svc: V1Service, type: EventType, reason: string, message: string): Promise<void> {
    const meta = svc.metadata ?? {};
    const namespace = meta.namespace ?? "default";
    const now = new Date();
    const name = `${meta.name ?? ""}.${this.source.aggregate ? digest(meta.uid, type, reason, message) : randomBytes(8).toString("hex")}`;
    this.sweep(now.getTime());
    const count = this.source.aggregate ? (this.counts.get(name)?.count ?? 0) + 1 : 1;
    try {
      if (count > 1) {
        await this.api.mergePatch(namespace, name, { count, lastTimestamp: now });
      } else {
        await this.api.create(namespace, {
          metadata: { name, namespace },
          involvedObject: {
            kind: "Service",
            apiVersion: "v1",
            namespace,
            name: meta.name,
            uid: meta.uid,
            resourceVersion: meta.resourceVersion,
          },
          type,
          reason,
          message: message.slice(0, MAX_MESSAGE),
          source: {
            component: this.source.component,
            ...(this.source.host ? { host: this.source.host } : {}),
          },
          reportingComponent: this.source.component,
          ...(this.source.host ? { reportingInstance: this.source.host } : {}),
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        });
      }
      if (this.source.aggregate) this.counts.set(name, { count, at: now.getTime() });
    } catch (err) {
      const code = (err as { code?: number }).code;
      // 409: made before this process started (a restart); 404: expired. Count afresh either way.
      if (this.source.aggregate && (code === 409 || code === 404)) {
        this.counts.delete(name);
        if (code === 409) {
          this.counts.set(name, { count: 1, at: now.getTime() });
          return this.record(svc, type, reason, message);
        }
        return;
      }
      // Events are best effort: failing to record one must not fail the work that told of it.
      this.log.warn(
        { service: `${namespace}/${meta.name ?? ""}`, err: (err as Error).message, reason },
        "could not record event",
      );
    }
  }

  /**
   * The apiserver deletes Events an hour after their last change (its --event-ttl); counts older than that
   * would only grow with every Service ever seen. One that outlived a longer TTL is met again as a conflict
   * (409) and counted afresh.
   */
  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (const [name, entry] of this.counts) if (now - entry.at > EVENT_TTL_MS) this.counts.delete(name);
  }
}

/** The same event on the same Service always has the same name, so its repeats find it. */
function digest(...parts: (string | undefined)[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 16);
}
