// Whether a bare-metal Service's traffic can arrive: it can once a speaker announces each of its addresses
// (it answers ARP/NDP for it, or FRR advertises it to a router over an established session, and its record
// says so), it cannot when no node may announce one (the speaker
// that would have reported it says why) or the Service has no ready endpoint (speakers announce none then),
// and it is not known yet while the first announcement is awaited. Pure: the records are read elsewhere.
import { endpointsBlock } from "../endpointTraffic.ts";
import type { LoadBalancerIntent, TrafficState } from "../provider.ts";
import type { Announcement } from "../../shared/bgpStatus.ts";
import type { L2StatusFields } from "../../shared/l2status.ts";

const WHY: Record<string, string> = {
  noMatchingNode:
    "no node that may announce it matches the nodeSelectors of its IPAddressPool or L2Advertisements: label a node to match, or change the selectors",
  noAdvertisement: "no L2Advertisement selects its IPAddressPool for this Service: create one that does",
};

export function metalTraffic(
  intent: LoadBalancerIntent,
  addresses: readonly string[],
  records: readonly Announcement[],
): TrafficState | undefined {
  if (addresses.length === 0) return undefined;
  // Speakers announce an address only while an endpoint serves it, and with Local only from nodes that hold one.
  const blocked = endpointsBlock(intent, { kind: "pods" });
  if (blocked) return blocked;
  const refused = addresses.flatMap((address) =>
    records.flatMap((r) => (r.notAnnounced ?? []).filter((n) => n.address === address)),
  );
  if (refused.length > 0) {
    const why = refused.map((n) => `${n.address}: ${WHY[n.reason] ?? n.reason}`);
    return {
      flowing: false,
      reason: "NotAnnounced",
      message: `Not announced by any node. ${why.join("; ")}`,
    };
  }
  const where = addresses.map((address) => ({
    address,
    by: records.filter((r) => r.addresses.includes(address)),
  }));
  const waiting = where.filter((w) => w.by.length === 0).map((w) => w.address);
  if (waiting.length > 0)
    return {
      flowing: undefined,
      reason: "AwaitingAnnouncement",
      message: `Waiting for a speaker to announce ${waiting.join(", ")}`,
    };
  const said = where.map((w) => {
    const l2 = w.by.filter((r) => r.bgpPeers === undefined);
    const bgp = w.by.filter((r) => r.bgpPeers !== undefined);
    const nodes = (records: readonly Announcement[]) =>
      records
        .map((r) => r.node)
        .sort()
        .join(" and node ");
    const ways = [
      ...(l2.length ? [`by node ${nodes(l2)} on ${interfacesOf(l2)}`] : []),
      ...(bgp.length
        ? [
            `over BGP by node ${nodes(bgp)} to ${[...new Set(bgp.flatMap((r) => r.bgpPeers!))].sort().join(", ")}`,
          ]
        : []),
    ];
    return `${w.address} ${ways.join(", and ")}`;
  });
  return { flowing: true, reason: "Announced", message: `Announced: ${said.join("; ")}` };
}

function interfacesOf(records: readonly L2StatusFields[]): string {
  const names = [...new Set(records.flatMap((r) => r.interfaces.map((i) => i.name)))].sort();
  return names.length === 0 || records.some((r) => r.interfaces.length === 0)
    ? "every interface"
    : names.join(", ");
}

/**
 * What the provider records on the Service: the pool each address came from, as
 * `portico.io/ip-allocated-from-pool`. One name when every address came from the same pool (always so for a
 * single-stack Service, and what MetalLB writes); for a dual-stack Service served by two pools, both names
 * comma-separated in the order of status.loadBalancer.ingress (a pool name never holds a comma). A reader that
 * knows the addresses finds each one's pool as the named pool holding it, so the order is a convenience only.
 */
export function poolRecord(addresses: readonly { readonly pool: string }[]): string | undefined {
  const names = [...new Set(addresses.map((a) => a.pool))];
  return names.length ? names.join(",") : undefined;
}
