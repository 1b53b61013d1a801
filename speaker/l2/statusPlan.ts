// Which ServiceL2Status records this speaker writes and deletes (see shared/l2status.ts): pure, from
// the announce decision every speaker computes alike and the records already in the cache.
//
// - This node keeps one record per Service it announces an address of (the addresses, and the interfaces it
//   answers them on), and per Service whose unannounced addresses it reports (noMatchingNode,
//   noAdvertisement); every other record of its own it deletes.
// - The announcer of an address deletes other nodes' records claiming it: after a failover the new announcer
//   replaces the dead one's claim at once, without waiting for the dead node to come back.
// - Records of nodes whose speaker is not alive (a node gone for good, or whose addresses nobody took over)
//   are deleted by one live speaker, the first by name, so none stays claiming a node that answers nothing.
import type { InUse, L2StatusFields, L2StatusRecord, NotAnnounced } from "../../shared/l2status.ts";
import {
  l2StatusName,
  L2STATUS_GROUP,
  L2STATUS_KIND,
  L2STATUS_NODE_LABEL,
  L2STATUS_PLURAL,
  L2STATUS_SERVICE_LABEL,
  L2STATUS_VERSION,
} from "../../shared/l2status.ts";
import type { DesiredRecord as GenericDesired, RecordKind, RecordPlan } from "../kube/recordWriter.ts";

export interface AnnouncedHere {
  /** namespace/name */
  readonly service: string;
  readonly uid: string;
  readonly address: string;
  /** The interfaces this node answers the address on. */
  readonly interfaces: readonly string[];
}

export interface ReportedHere {
  readonly service: string;
  readonly uid: string;
  readonly notAnnounced: NotAnnounced;
}

export interface FoundInUse {
  readonly service: string;
  readonly uid: string;
  readonly inUse: InUse;
}

export interface L2StatusInput {
  readonly node: string;
  readonly announced: readonly AnnouncedHere[];
  readonly reported: readonly ReportedHere[];
  /** Addresses elected here that another host answered this node's ARP probe for. */
  readonly inUse?: readonly FoundInUse[];
  readonly existing: readonly L2StatusRecord[];
  /** Speakers alive now, this one included. */
  readonly live: ReadonlySet<string>;
}

export type DesiredRecord = GenericDesired<L2StatusFields>;
export type L2StatusPlan = RecordPlan<L2StatusFields>;

/** ServiceL2Status records, for the record writer. */
export const L2_RECORDS: RecordKind<L2StatusFields> = {
  group: L2STATUS_GROUP,
  version: L2STATUS_VERSION,
  plural: L2STATUS_PLURAL,
  kind: L2STATUS_KIND,
  serviceLabel: L2STATUS_SERVICE_LABEL,
  nodeLabel: L2STATUS_NODE_LABEL,
  fingerprint,
  patch: (status) => ({ ...status, notAnnounced: status.notAnnounced ?? null, inUse: status.inUse ?? null }),
};

export function planL2Statuses(input: L2StatusInput): L2StatusPlan {
  interface Draft {
    uid: string;
    interfaces: Set<string>;
    addresses: Set<string>;
    notAnnounced: NotAnnounced[];
    inUse: InUse[];
  }
  const drafts = new Map<string, Draft>();
  const draft = (service: string, uid: string): Draft => {
    let d = drafts.get(service);
    if (!d) {
      d = { uid, interfaces: new Set(), addresses: new Set(), notAnnounced: [], inUse: [] };
      drafts.set(service, d);
    }
    return d;
  };
  for (const a of input.announced) {
    const d = draft(a.service, a.uid);
    d.addresses.add(a.address);
    a.interfaces.forEach((name) => d.interfaces.add(name));
  }
  for (const r of input.reported) draft(r.service, r.uid).notAnnounced.push(r.notAnnounced);
  for (const f of input.inUse ?? []) draft(f.service, f.uid).inUse.push(f.inUse);
  const desired = new Map<string, DesiredRecord>();
  for (const [service, d] of drafts) {
    const [namespace, serviceName] = splitKey(service);
    const name = l2StatusName(serviceName, input.node);
    const notAnnounced = [...d.notAnnounced].sort(byAddress);
    const inUse = [...d.inUse].sort(byAddress);
    desired.set(`${namespace}/${name}`, {
      name,
      namespace,
      serviceUid: d.uid,
      status: {
        node: input.node,
        serviceName,
        serviceNamespace: namespace,
        interfaces: [...d.interfaces].sort().map((n) => ({ name: n })),
        addresses: [...d.addresses].sort(),
        ...(notAnnounced.length ? { notAnnounced } : {}),
        ...(inUse.length ? { inUse } : {}),
      },
    });
  }

  const existing = new Map<string, L2StatusRecord>(
    input.existing.map((r) => [`${r.namespace}/${r.name}`, r]),
  );
  const write = [...desired.entries()]
    .filter(([key, record]) => {
      const have = existing.get(key);
      return !have || fingerprint(have.status) !== fingerprint(record.status);
    })
    .map(([, record]) => record);

  const mine = new Set(input.announced.map((a) => `${a.service}\u0000${a.address}`));
  const janitor = [...input.live].sort()[0] === input.node;
  const remove = input.existing
    .filter((r) => {
      if (desired.has(`${r.namespace}/${r.name}`)) return false;
      if (r.status.node === input.node) return true;
      const service = `${r.namespace}/${r.status.serviceName}`;
      if (r.status.addresses.some((address) => mine.has(`${service}\u0000${address}`))) return true;
      return janitor && !input.live.has(r.status.node);
    })
    .map((r) => ({ name: r.name, namespace: r.namespace }));
  return { write, remove };
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf("/");
  return [key.slice(0, i), key.slice(i + 1)];
}

function byAddress(a: { address: string }, b: { address: string }): number {
  return a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
}

/** What decides whether a record must be written again. */
export function fingerprint(status: L2StatusFields): string {
  return JSON.stringify([
    status.node,
    status.serviceName,
    status.addresses,
    status.interfaces.map((i) => i.name),
    (status.notAnnounced ?? []).map((n) => [n.address, n.reason]),
    (status.inUse ?? []).map((n) => [n.address, n.mac]),
  ]);
}
