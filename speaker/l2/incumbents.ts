// An address stays where it is announced. The rendezvous election alone would move an address back to its
// preferred node as soon as that node is eligible again (uncordoned, its speaker back, an endpoint back on it
// for Local), and every move cuts the connections entering through the node that announced it: the client's
// next packet arrives at a node whose kube-proxy has no connection tracking for it. So the node that announces
// an address keeps it for as long as it stays a candidate, and the election only decides when it is not.
//
// Every speaker has to know the incumbent to agree on it, and each does: the announcer's ServiceL2Status
// record names it (speaker/l2/statusPlan.ts). Between records written by different nodes (a hand-over in
// flight), the election among those still candidates decides, the same on every speaker. The price is
// balance: after nodes come back, addresses stay spread over the nodes that stayed, until they move again.
import type { L2StatusRecord } from "../../shared/l2status.ts";
import type { Elect } from "./assignment.ts";
import { electionKey } from "./election.ts";

/** The nodes whose records say they answer each address (by election key). */
export function incumbentsOf(records: readonly L2StatusRecord[]): Map<string, Set<string>> {
  const byAddress = new Map<string, Set<string>>();
  for (const { status } of records) {
    for (const address of status.addresses) {
      const key = electionKey(address);
      let nodes = byAddress.get(key);
      if (!nodes) byAddress.set(key, (nodes = new Set()));
      nodes.add(status.node);
    }
  }
  return byAddress;
}

/** `elect`, kept to the incumbents among the candidates when there are any. */
export function keepIncumbents(elect: Elect, incumbents: ReadonlyMap<string, ReadonlySet<string>>): Elect {
  return (address, candidates) => {
    const recorded = incumbents.get(electionKey(address));
    if (recorded) {
      const staying = new Set([...recorded].filter((node) => candidates.has(node)));
      if (staying.size > 0) return elect(address, staying);
    }
    return elect(address, candidates);
  };
}
