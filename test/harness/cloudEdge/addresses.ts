// Where the emulated cloud edge sits and whom it serves: its own address on the test LAN, the NLBs' addresses
// beside it, and the "internet": a client on a network of its own behind the edge, which the nodes reach back
// through the edge, as a cloud's clients are reached through its load balancers.

/** The test LAN, shared by the nodes, the LAN's client and the edge. */
export const LAN_CIDR = "192.0.2.0/24";
/** Where the edge gives NLBs their addresses: on the LAN, clear of its hosts and of the suites' IP pools. */
export const NLB_ADDRESSES = { first: 200, last: 219 };

/** Where one edge sits: its address on the LAN, and its internet client's network, its own address there and the client's. */
export interface EdgeSite {
  address: string;
  internet: { cidr: string; edge: string; client: string };
}

/**
 * One site per cloud, so that both edges can stand on the LAN at once (as in `make demo`): halves of TEST-NET-3
 * for the internet clients, each routed from the nodes to its own edge.
 */
export const EDGE_SITES = {
  nlb: {
    address: "192.0.2.199",
    internet: { cidr: "203.0.113.0/25", edge: "203.0.113.1", client: "203.0.113.10" },
  },
  azure: {
    address: "192.0.2.198",
    internet: { cidr: "203.0.113.128/25", edge: "203.0.113.129", client: "203.0.113.138" },
  },
} satisfies Record<string, EdgeSite>;
