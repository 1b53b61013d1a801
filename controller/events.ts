// Events on Services, as `kubectl describe service` shows them. Repeats of the same event are counted on
// one Event object (as client-go's recorder does) instead of flooding the namespace.
import { createHash } from "node:crypto";
import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import { mergePatch } from "../shared/patch.ts";
import type { Logger } from "../shared/log.ts";

export type EventType = "Normal" | "Warning";

export interface EventSink {
  record(svc: V1Service, type: EventType, reason: string, message: string): Promise<void>;
}

const EVENT_TTL_MS = 60 * 60 * 1000;
const SWEEP_EVERY_MS = 10 * 60 * 1000;

export class EventRecorder implements EventSink {
  private readonly core: CoreV1Api;
  private readonly component: string;
  private readonly log: Logger;
  /** Event name → how often it was recorded and when last; forgotten once the apiserver has let it expire. */
  private readonly counts = new Map<string, { count: number; at: number }>();
  private sweptAt = Date.now();

  constructor(core: CoreV1Api, log: Logger, component = "portico-controller") {
    this.core = core;
    this.log = log;
    this.component = component;
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

  async record(svc: V1Service, type: EventType, reason: string, message: string): Promise<void> {
    const meta = svc.metadata!;
    const namespace = meta.namespace!;
    const digest = createHash("sha256")
      .update([meta.uid, type, reason, message].join("\u0000"))
      .digest("hex")
      .slice(0, 16);
    const name = `${meta.name}.${digest}`;
    const now = new Date();
    this.sweep(now.getTime());
    const count = (this.counts.get(name)?.count ?? 0) + 1;
    try {
      if (count > 1) {
        await this.core.patchNamespacedEvent(
          { name, namespace, body: { count, lastTimestamp: now } },
          mergePatch,
        );
      } else {
        await this.core.createNamespacedEvent({
          namespace,
          body: {
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
            message: message.slice(0, 1024),
            source: { component: this.component },
            reportingComponent: this.component,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        });
      }
      this.counts.set(name, { count, at: now.getTime() });
    } catch (err) {
      const code = (err as { code?: number }).code;
      // 409: made before this process started (a restart); 404: expired. Count afresh either way.
      if (code === 409 || code === 404) {
        this.counts.delete(name);
        if (code === 409) {
          this.counts.set(name, { count: 1, at: now.getTime() });
          return this.record(svc, type, reason, message);
        }
        return;
      }
      // Events are best effort: failing to record one must not fail the reconcile.
      this.log.warn({ err: (err as Error).message, reason }, "could not record event");
    }
  }
}
