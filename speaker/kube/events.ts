// The `nodeAssigned` Event on a Service, naming the node that announces it (as MetalLB does), so
// `kubectl describe service` shows where its traffic enters. Only the winning node writes it, and only when
// the announcer changes, so a stable cluster writes no Events at all.
import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";

export const NODE_ASSIGNED = "nodeAssigned";

export async function recordNodeAssigned(
  core: CoreV1Api,
  log: Logger,
  service: V1Service,
  node: string,
  addresses: readonly string[],
): Promise<void> {
  const namespace = service.metadata?.namespace ?? "default";
  const name = service.metadata?.name ?? "";
  const now = new Date();
  const message = `announcing from node "${node}" with protocol "layer2" (${addresses.join(", ")})`;
  try {
    await core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `${name}.${randomBytes(8).toString("hex")}`, namespace },
        involvedObject: {
          kind: "Service",
          apiVersion: "v1",
          namespace,
          name,
          uid: service.metadata?.uid,
          resourceVersion: service.metadata?.resourceVersion,
        },
        type: "Normal",
        reason: NODE_ASSIGNED,
        message,
        source: { component: "portico-speaker", host: node },
        reportingComponent: "portico-speaker",
        reportingInstance: node,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  } catch (err) {
    log.warn({ service: `${namespace}/${name}`, err: (err as Error).message }, "could not record event");
  }
}
