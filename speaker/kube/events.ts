// The speaker's Events on a Service. `nodeAssigned` names the node that announces it (as MetalLB does), so
// `kubectl describe service` shows where its traffic enters; `noMatchingNode` says that nobody announces it
// because its pool's nodeSelectors match none of the nodes that could. One node writes each (the announcer,
// or the node that would announce without the selectors), and only when that changes, so a stable cluster
// writes no Events at all.
import type { V1Service } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { EventRecorder, type EventType } from "../../shared/events.ts";
import { resourcePath, type KubeApi } from "./api/client.ts";

export const NODE_ASSIGNED = "nodeAssigned";
export const NO_MATCHING_NODE = "noMatchingNode";

export function recordNodeAssigned(
  api: KubeApi,
  log: Logger,
  service: V1Service,
  node: string,
  addresses: readonly string[],
): Promise<void> {
  const message = `announcing from node "${node}" with protocol "layer2" (${addresses.join(", ")})`;
  return record(api, log, service, node, { type: "Normal", reason: NODE_ASSIGNED, message });
}

export const NO_ADVERTISEMENT = "noAdvertisement";

export interface Unmatched {
  readonly address: string;
  /** The pool's key: its name, or namespace/name for MetalLB's. */
  readonly pool: string;
  readonly reason: "noMatchingNode" | "noAdvertisement";
}

/**
 * Why nobody announces the Service's addresses: the pool's (or its L2Advertisements') nodeSelectors match no
 * node that could, or no L2Advertisement selects the pool for this Service (MetalLB's semantics).
 */
export function recordNoMatchingNode(
  api: KubeApi,
  log: Logger,
  service: V1Service,
  node: string,
  unmatched: readonly Unmatched[],
): Promise<void> {
  const sentences = unmatched.map((u) =>
    u.reason === "noAdvertisement"
      ? `${u.address} (IPAddressPool ${u.pool}): no L2Advertisement selects the pool for this Service; ` +
        `create one that lists the pool (or lists no pool, selecting all of them) and whose serviceSelectors match`
      : `${u.address} (IPAddressPool ${u.pool}): no node that could announce it matches the nodeSelectors; ` +
        `label a Ready node running a speaker to match them, or change the nodeSelectors of the pool or its L2Advertisements`,
  );
  const reason = unmatched.every((u) => u.reason === "noAdvertisement") ? NO_ADVERTISEMENT : NO_MATCHING_NODE;
  const message = `not announced: ${sentences.join("; ")}`;
  return record(api, log, service, node, { type: "Warning", reason, message });
}

export const ADDRESS_IN_USE = "AddressInUse";

/** Another host on the LAN answered this node's ARP probe for the Service's address. */
export function recordAddressInUse(
  api: KubeApi,
  log: Logger,
  service: V1Service,
  node: string,
  found: { address: string; mac: string; announced: boolean },
): Promise<void> {
  const message = found.announced
    ? `${found.address} is in use on the LAN by ${found.mac}, which is not a speaker, and node "${node}" took it over: two hosts answer for it; remove it from that host, or from the pool`
    : `${found.address} is in use on the LAN by ${found.mac}, which is not a speaker: not announced; the controller hands out another address`;
  return record(api, log, service, node, { type: "Warning", reason: ADDRESS_IN_USE, message });
}

function record(
  api: KubeApi,
  log: Logger,
  service: V1Service,
  node: string,
  event: { type: EventType; reason: string; message: string },
): Promise<void> {
  return speakerEvents(api, log, node).record(service, event.type, event.reason, event.message);
}

/** Each event its own Event object, written from this node: the speaker's role creates Events and nothing more. */
function speakerEvents(api: KubeApi, log: Logger, node: string): EventRecorder {
  const path = (namespace: string, name?: string) =>
    resourcePath({ group: "", version: "v1", plural: "events", namespace, ...(name ? { name } : {}) });
  return new EventRecorder(
    {
      create: (namespace, body) => api.create(path(namespace), body),
      mergePatch: (namespace, name, body) => api.mergePatch(path(namespace, name), body),
    },
    log,
    { component: "portico-speaker", host: node, aggregate: false },
  );
}
