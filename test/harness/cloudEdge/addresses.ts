// Where the emulated cloud edge sits and whom it serves: its own address on the test LAN, the NLBs' addresses
// beside it, and the "internet": a client on a network of its own behind the edge, which the nodes reach back
// through the edge, as a cloud's clients are reached through its load balancers.

/** The test LAN, shared by the nodes, the LAN's client and the edge. */
export const LAN_CIDR = "192.0.2.0/24";
export const EDGE_ADDRESS = "192.0.2.199";
/** Where the edge gives NLBs their addresses: on the LAN, clear of its hosts and of the suites' IP pools. */
export const NLB_ADDRESSES = { first: 200, last: 219 };

/** The internet client's network (TEST-NET-3), the edge's address on it and the client's. */
export const INTERNET = { cidr: "203.0.113.0/24", edge: "203.0.113.1", client: "203.0.113.10" };
