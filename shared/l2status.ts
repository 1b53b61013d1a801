// The announcement records: a ServiceL2Status (portico.io/v1alpha1) per Service and announcing node, in the
// Service's namespace, written by the speaker that announces the Service's addresses and read by users, tools
// and the controller (whose Serving condition follows them). The shape follows MetalLB's ServiceL2Status
// (status.node, status.serviceName, status.serviceNamespace, status.interfaces[].name) and adds the addresses
// the node announces, and why an address is not announced at all. Shared by the speaker (which writes) and the
// controller (which reads), so both agree on names and fields.
import { createHash } from "node:crypto";

export const L2STATUS_GROUP = "portico.io";
export const L2STATUS_VERSION = "v1alpha1";
export const L2STATUS_PLURAL = "servicel2statuses";
export const L2STATUS_KIND = "ServiceL2Status";
/** Labels that find a Service's records (with a label selector, or in a cache) and the node that wrote one. */
export const L2STATUS_SERVICE_LABEL = "portico.io/service-name";
export const L2STATUS_NODE_LABEL = "portico.io/node";

/** An address nobody announces, and why (reasons as the speaker's Events and metrics name them). */
export interface NotAnnounced {
  readonly address: string;
  /** noMatchingNode, noAdvertisement */
  readonly reason: string;
}

export interface L2StatusFields {
  readonly node: string;
  readonly serviceName: string;
  readonly serviceNamespace: string;
  /** Where the node answers; empty: on every interface it opened. */
  readonly interfaces: readonly { readonly name: string }[];
  /** The Service's addresses this node announces. */
  readonly addresses: readonly string[];
  /** On the record of the node that reports them (one per Service): addresses no node may announce. */
  readonly notAnnounced?: readonly NotAnnounced[];
  /**
   * Addresses another host on the LAN answered an ARP probe for (its MAC): one not in `addresses` was never
   * announced (a new address; the controller hands out another), one in it was taken over while in use.
   */
  readonly inUse?: readonly InUse[];
}

export interface InUse {
  readonly address: string;
  readonly mac: string;
}

/**
 * The record's name: the Service's name and a short hash of the node's, so each node has exactly one record per
 * Service (re-creating it is idempotent, two never race for one name) and it still sorts beside its Service.
 * A Service name is a DNS label (at most 63 characters), so the name always fits.
 */
export function l2StatusName(serviceName: string, node: string): string {
  return `${serviceName}-${createHash("sha256").update(node).digest("hex").slice(0, 10)}`;
}

/** The fields the controller and the speaker keep of a record (everything else is dropped from their caches). */
export interface L2StatusRecord {
  readonly name: string;
  readonly namespace: string;
  readonly resourceVersion?: string;
  readonly status: L2StatusFields;
}

/** A record as read from the API, leniently: a field of the wrong type reads as absent. */
export function readL2Status(obj: {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  status?: unknown;
}): L2StatusRecord | undefined {
  const name = obj.metadata?.name;
  const namespace = obj.metadata?.namespace;
  const raw = (typeof obj.status === "object" && obj.status !== null ? obj.status : {}) as Record<
    string,
    unknown
  >;
  const node = typeof raw.node === "string" ? raw.node : obj.metadata?.labels?.[L2STATUS_NODE_LABEL];
  const serviceName =
    typeof raw.serviceName === "string" ? raw.serviceName : obj.metadata?.labels?.[L2STATUS_SERVICE_LABEL];
  if (!name || !namespace || !node || !serviceName) return undefined;
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  const objects = (v: unknown) =>
    Array.isArray(v)
      ? v.filter((o): o is Record<string, unknown> => typeof o === "object" && o !== null)
      : [];
  return {
    name,
    namespace,
    ...(obj.metadata?.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
    status: {
      node,
      serviceName,
      serviceNamespace: namespace,
      interfaces: objects(raw.interfaces).flatMap((i) =>
        typeof i.name === "string" ? [{ name: i.name }] : [],
      ),
      addresses: strings(raw.addresses),
      notAnnounced: objects(raw.notAnnounced).flatMap((n) =>
        typeof n.address === "string" && typeof n.reason === "string"
          ? [{ address: n.address, reason: n.reason }]
          : [],
      ),
      inUse: objects(raw.inUse).flatMap((n) =>
        typeof n.address === "string" && typeof n.mac === "string"
          ? [{ address: n.address, mac: n.mac }]
          : [],
      ),
    },
  };
}

/**
 * Drops, in place, what no reader of a record needs (managedFields above all, most of an object's size), so a
 * cache holding a record per Service stays small. Register it before any other handler of the list-watch: the
 * cache keeps the very object its handlers receive.
 */
export function trimL2Status(obj: { metadata?: object; spec?: unknown }): void {
  const metadata = obj.metadata as Record<string, unknown> | undefined;
  if (metadata) {
    for (const key of Object.keys(metadata)) {
      if (!["name", "namespace", "resourceVersion", "labels", "uid"].includes(key)) delete metadata[key];
    }
  }
  delete obj.spec;
}
