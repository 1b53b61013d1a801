// Which ServiceBGPStatus records this speaker writes and deletes (shared/bgpStatus.ts): pure, from
// what this node advertises, which of its sessions are up, and the records in the cache.
// - This node keeps one record per Service whose addresses it advertises to at least one peer over an
//   established session, once FRR applied the configuration that advertises them; every other record of its own
//   it deletes (a withdrawn route, a session down: a router no longer learns the address from this node).
// - Records of nodes whose speaker is not alive are deleted by one live speaker, the first by name.
import {
  BGPSTATUS_GROUP,
  BGPSTATUS_KIND,
  BGPSTATUS_NODE_LABEL,
  BGPSTATUS_PLURAL,
  BGPSTATUS_SERVICE_LABEL,
  BGPSTATUS_VERSION,
  bgpStatusName,
  type BgpStatusFields,
  type BgpStatusRecord,
} from "../../shared/bgpStatus.ts";
import type { DesiredRecord, RecordKind, RecordPlan } from "../kube/recordWriter.ts";
import { parseIP } from "../../shared/address.ts";
import { maskedPrefix, type AdvertisedPrefix } from "./routes.ts";

export interface BgpStatusInput {
  readonly node: string;
  /** What the configuration FRR runs now advertises (empty until FRR confirmed one). */
  readonly prefixes: readonly AdvertisedPrefix[];
  /** Peer key → its name (as advertisements and users name it), for the peers whose session is established. */
  readonly established: ReadonlyMap<string, string>;
  /** namespace/name → the Service's UID and addresses. */
  readonly services: ReadonlyMap<string, { readonly uid: string; readonly addresses: readonly string[] }>;
  readonly existing: readonly BgpStatusRecord[];
  readonly live: ReadonlySet<string>;
}

export function planBgpStatuses(input: BgpStatusInput): RecordPlan<BgpStatusFields> {
  const drafts = new Map<string, { peers: Set<string>; addresses: Set<string> }>();
  for (const prefix of input.prefixes) {
    const peers = [...prefix.peers.keys()].flatMap((key) => input.established.get(key) ?? []);
    if (peers.length === 0) continue;
    for (const service of prefix.services) {
      const known = input.services.get(service);
      if (!known) continue;
      const draft = drafts.get(service) ?? { peers: new Set<string>(), addresses: new Set<string>() };
      drafts.set(service, draft);
      peers.forEach((p) => draft.peers.add(p));
      for (const address of known.addresses)
        if (contains(prefix.prefix, address)) draft.addresses.add(address);
    }
  }
  const desired = new Map<string, DesiredRecord<BgpStatusFields>>();
  for (const [service, draft] of drafts) {
    const i = service.indexOf("/");
    const [namespace, serviceName] = [service.slice(0, i), service.slice(i + 1)];
    const name = bgpStatusName(serviceName, input.node);
    desired.set(`${namespace}/${name}`, {
      name,
      namespace,
      serviceUid: input.services.get(service)!.uid,
      status: {
        node: input.node,
        serviceName,
        serviceNamespace: namespace,
        peers: [...draft.peers].sort(),
        addresses: [...draft.addresses].sort(),
      },
    });
  }
  const existing = new Map<string, BgpStatusRecord>(
    input.existing.map((r) => [`${r.namespace}/${r.name}`, r]),
  );
  const write = [...desired]
    .filter(([key, record]) => {
      const have = existing.get(key);
      return !have || bgpFingerprint(have.status) !== bgpFingerprint(record.status);
    })
    .map(([, record]) => record);
  const janitor = [...input.live].sort()[0] === input.node;
  const remove = input.existing
    .filter((r) => {
      if (desired.has(`${r.namespace}/${r.name}`)) return false;
      return r.status.node === input.node || (janitor && !input.live.has(r.status.node));
    })
    .map((r) => ({ name: r.name, namespace: r.namespace }));
  return { write, remove };
}

export function bgpFingerprint(status: BgpStatusFields): string {
  return JSON.stringify([status.node, status.serviceName, status.peers, status.addresses]);
}

/** ServiceBGPStatus records, for the record writer. */
export const BGP_RECORDS: RecordKind<BgpStatusFields> = {
  group: BGPSTATUS_GROUP,
  version: BGPSTATUS_VERSION,
  plural: BGPSTATUS_PLURAL,
  kind: BGPSTATUS_KIND,
  serviceLabel: BGPSTATUS_SERVICE_LABEL,
  nodeLabel: BGPSTATUS_NODE_LABEL,
  fingerprint: bgpFingerprint,
  patch: (status) => ({ ...status }),
};

/** Whether `prefix` ("198.51.100.0/24") holds `address`. */
function contains(prefix: string, address: string): boolean {
  const [network, length] = prefix.split("/");
  const [net, addr] = [parseIP(network!), parseIP(address)];
  if (!net.ok || !addr.ok || net.value.family !== addr.value.family) return false;
  return maskedPrefix(addr.value.family, addr.value.value, Number(length)) === prefix;
}
