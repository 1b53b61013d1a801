// The BGP announcement records: a ServiceBGPStatus (portico.io/v1alpha1) per Service and advertising node, in
// the Service's namespace, written by that node's speaker once FRR applied the route and at least one session it
// goes out on is established — never before, so a record means a router has been told. The shape follows
// MetalLB's ServiceBGPStatus (status.node, serviceName, serviceNamespace, peers[]) and adds the addresses.
// Shared by the speaker (which writes) and the controller (which reads, for the Serving condition).
import { l2StatusName, type L2StatusFields } from "./l2status.ts";

/** A speaker's record of where a Service's addresses are announced: over ARP/NDP, or over BGP to peers. */
export type Announcement = L2StatusFields & { readonly bgpPeers?: readonly string[] };

export const BGPSTATUS_GROUP = "portico.io";
export const BGPSTATUS_VERSION = "v1alpha1";
export const BGPSTATUS_PLURAL = "servicebgpstatuses";
export const BGPSTATUS_KIND = "ServiceBGPStatus";
export const BGPSTATUS_SERVICE_LABEL = "portico.io/service-name";
export const BGPSTATUS_NODE_LABEL = "portico.io/node";

export interface BgpStatusFields {
  readonly node: string;
  readonly serviceName: string;
  readonly serviceNamespace: string;
  /** The BGPPeers (names) the node advertises the Service's addresses to, over established sessions. */
  readonly peers: readonly string[];
  readonly addresses: readonly string[];
}

export interface BgpStatusRecord {
  readonly name: string;
  readonly namespace: string;
  readonly status: BgpStatusFields;
}

/** One record per Service and node, named like the L2 records (Service name and a hash of the node's). */
export const bgpStatusName = l2StatusName;

export function readBgpStatus(obj: {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  status?: unknown;
}): BgpStatusRecord | undefined {
  const name = obj.metadata?.name;
  const namespace = obj.metadata?.namespace;
  const raw = (typeof obj.status === "object" && obj.status !== null ? obj.status : {}) as Record<
    string,
    unknown
  >;
  const node = typeof raw.node === "string" ? raw.node : obj.metadata?.labels?.[BGPSTATUS_NODE_LABEL];
  const serviceName =
    typeof raw.serviceName === "string" ? raw.serviceName : obj.metadata?.labels?.[BGPSTATUS_SERVICE_LABEL];
  if (!name || !namespace || !node || !serviceName) return undefined;
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  return {
    name,
    namespace,
    status: {
      node,
      serviceName,
      serviceNamespace: namespace,
      peers: strings(raw.peers),
      addresses: strings(raw.addresses),
    },
  };
}

/** A BGP record as the Serving condition reads announcements: the node, its addresses, and over which peers. */
export function bgpAnnouncement(status: BgpStatusFields): Announcement {
  return {
    node: status.node,
    serviceName: status.serviceName,
    serviceNamespace: status.serviceNamespace,
    interfaces: [],
    addresses: status.addresses,
    bgpPeers: status.peers,
  };
}
