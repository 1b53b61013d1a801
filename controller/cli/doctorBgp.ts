// `porticoctl doctor` on a bare-metal Service advertised over BGP: whether some node advertises its addresses
// to a router (the speakers' ServiceBGPStatus records, written only once FRR applied the route and a session
// it goes out on is up) and, when none does, what the BGPPeers' sessions say — a session never established
// (a wrong address, AS number or password) explains an address no router learned.
import type { CustomObjectsApi, V1Service } from "@kubernetes/client-node";
import { readBgpStatus } from "../../shared/bgpStatus.ts";
import type { Finding } from "./finding.ts";

const API = { group: "portico.io", version: "v1alpha1" } as const;

interface PeerObject {
  metadata?: { name?: string };
  spec?: { peerAddress?: string; peerASN?: number };
  status?: { sessions?: Record<string, { state?: string; established?: boolean; lastError?: string }> };
}

export async function bgpFindings(custom: CustomObjectsApi, svc: V1Service): Promise<Finding[]> {
  const namespace = svc.metadata?.namespace ?? "";
  const name = svc.metadata?.name ?? "";
  const addresses = (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : []));
  if (addresses.length === 0) return [];
  // No BGP kinds installed (404) or no right to read them: an L2-only cluster; nothing to say.
  const peers = (await custom
    .listClusterCustomObject({ ...API, plural: "bgppeers" })
    .catch(() => ({ items: [] }))) as { items: PeerObject[] };
  if (peers.items.length === 0) return [];
  const records = (
    (await custom
      .listNamespacedCustomObject({ ...API, plural: "servicebgpstatuses", namespace })
      .catch(() => ({ items: [] }))) as { items: { metadata?: object; status?: unknown }[] }
  ).items
    .flatMap((o) => readBgpStatus(o) ?? [])
    .filter((r) => r.status.serviceName === name);
  if (records.length > 0) {
    const nodes = records.map((r) => r.status.node).sort();
    const to = [...new Set(records.flatMap((r) => r.status.peers))].sort();
    return [
      {
        check: "BGP",
        result: "ok",
        detail: `${[...new Set(records.flatMap((r) => r.status.addresses))].sort().join(", ")} advertised by ${nodes.join(", ")} to ${to.join(", ")}`,
      },
    ];
  }
  const sessions = peers.items.flatMap((peer) =>
    Object.entries(peer.status?.sessions ?? {}).map(([node, s]) => ({
      peer: peer.metadata?.name ?? "",
      node,
      ...s,
    })),
  );
  const up = sessions.filter((s) => s.established);
  if (up.length === 0) {
    const why = sessions
      .slice(0, 6)
      .map(
        (s) => `${s.peer} from ${s.node}: ${s.state ?? "unknown"}${s.lastError ? ` (${s.lastError})` : ""}`,
      );
    return [
      {
        check: "BGP",
        result: "bad",
        detail: `no router learned ${addresses.join(", ")}: no BGP session is established${why.length ? `; ${why.join("; ")}` : " (no node reports a session: are the speakers running with FRR, and do the BGPPeers' nodeSelectors match any node?)"}`,
        fix: "check each BGPPeer's peerAddress, peerASN and myASN against the router's configuration, its password (passwordSecret), and that the router accepts the nodes as neighbours",
      },
    ];
  }
  return [
    {
      check: "BGP",
      result: "warn",
      detail: `sessions are up (${up.map((s) => `${s.peer} from ${s.node}`).join(", ")}) but no node advertises ${addresses.join(", ")}`,
      fix: "a BGPAdvertisement must select the address's IPAddressPool and the Service (serviceSelectors), its nodeSelectors and peers must match; with externalTrafficPolicy: Local only nodes with a ready endpoint advertise — or the pool is announced in L2 mode only",
    },
  ];
}
