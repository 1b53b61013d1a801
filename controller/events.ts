// Events on Services, as `kubectl describe service` shows them. Repeats of the same event are counted on
// one Event object (as client-go's recorder does) instead of flooding the namespace.
import { createHash } from "node:crypto";
import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import { mergePatch } from "./patch.ts";
import type { Logger } from "./log.ts";

export type EventType = "Normal" | "Warning";

export interface EventSink {
  record(svc: V1Service, type: EventType, reason: string, message: string): Promise<void>;
}

export class EventRecorder implements EventSink {
  private readonly core: CoreV1Api;
  private readonly component: string;
  private readonly log: Logger;
  private readonly counts = new Map<string, number>();

  constructor(core: CoreV1Api, log: Logger, component = "portico-controller") {
    this.core = core;
    this.log = log;
    this.component = component;
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
    const count = (this.counts.get(name) ?? 0) + 1;
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
      this.counts.set(name, count);
    } catch (err) {
      const code = (err as { code?: number }).code;
      // 409: made before this process started (a restart); 404: expired. Count afresh either way.
      if (code === 409 || code === 404) {
        this.counts.delete(name);
        if (code === 409) {
          this.counts.set(name, 1);
          return this.record(svc, type, reason, message);
        }
        return;
      }
      // Events are best effort: failing to record one must not fail the reconcile.
      this.log.warn({ err: (err as Error).message, reason }, "could not record event");
    }
  }
}
