// The fast subset of Kubernetes' own LoadBalancer tests that `make test` runs on the four set-ups
// (test/e2e/conformance.test.ts), so that CI guards what `make test-conformance` shows: one test per area, the
// quickest that covers it, on the set-ups where Portico does that area its own way. The two bare-metal set-ups
// differ only in how the address is announced, so an area whose data path is kube-proxy's on both runs on one of
// them; an area runs on eks and aks where the cloud's load balancer does it (listeners, security rules, probes).
// Every set-up runs Local's health check node port, which each serves differently. Left to
// `make test-conformance`: the rest of each set-up (the slowest being eks's source ranges, 105 s, and UDP on bgp),
// the rolling-update tests (about 16 minutes each), the cleanup finalizer (Portico's own tests cover it), and the
// tests a set-up fails for a reason of its own load balancer (explanations.ts), such as UDP through an NLB's DNS
// name.
import type { SetupName } from "./setups.ts";

interface SubsetTest {
  /** What it covers. */
  area: string;
  /** The test's name after "[sig-network] LoadBalancers ", as Ginkgo prints it. */
  name: string;
  /** The set-ups it runs on, when not all four. */
  only?: readonly SetupName[];
}

export const FAST_SUBSET: readonly SubsetTest[] = [
  {
    area: "type and ports: NodePort to LoadBalancer, a new node port and port, scaled to zero (refused) and back",
    name: "[Feature:LoadBalancer] should be able to change the type and ports of a TCP service [Slow]",
    // A new port is a new listener and target group on an NLB; on bare metal and Azure a rule like any other.
    only: ["bgp", "eks"],
  },
  {
    area: "allocateLoadBalancerNodePorts: false, then node ports allocated",
    name: "[Feature:LoadBalancer] should be able to create LoadBalancer Service without NodePort and change it [Slow]",
    // Pod targets: ip target groups on an NLB, pod backends on Azure; bare metal never uses node ports.
    only: ["eks", "aks"],
  },
  {
    area: "loadBalancerSourceRanges: the client refused, then let in",
    name: "[Feature:LoadBalancer] should only allow access from service loadbalancer source ranges [Slow]",
    // kube-proxy's rules on bare metal; the NSG on Azure. The NLB's security group is covered by Portico's own
    // data-path tests (awsDataPlane), and here by make test-conformance.
    only: ["l2", "aks"],
  },
  {
    area: "sessionAffinity: ClientIP",
    name: "[Feature:LoadBalancer] should have session affinity work for LoadBalancer service with Cluster traffic policy [Slow] [LinuxOnly]",
    // Through the router's ECMP on bgp; the target group's stickiness on eks is left to make test-conformance.
    only: ["bgp", "aks"],
  },
  {
    area: "externalTrafficPolicy: Local, its health check node port on every node with endpoints",
    name: "ExternalTrafficPolicy: Local [Feature:LoadBalancer] [Slow] should target all nodes with endpoints",
  },
  {
    area: "UDP, its conntrack entries across a server pod's restart",
    name: "[Feature:LoadBalancer] should be able to preserve UDP traffic when server pod cycles for a LoadBalancer service on the same nodes",
    // The test sends to the ingress's IP, and an NLB's ingress is a DNS name (explanations.ts).
    only: ["l2", "aks"],
  },
];

/** The full names of the subset's tests on a set-up, as summarize() reports them. */
export function subsetNames(setup: SetupName): string[] {
  return FAST_SUBSET.filter((t) => !t.only || t.only.includes(setup)).map(
    (t) => `[sig-network] LoadBalancers ${t.name}`,
  );
}

/** Ginkgo's focus for the subset on a set-up: any of its names. */
export function subsetFocus(setup: SetupName): string {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return subsetNames(setup).map(escape).join("|");
}
