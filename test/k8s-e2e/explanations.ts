// Why a Kubernetes LoadBalancer test does not pass on a set-up, where the cause is not Portico's: what the
// set-up's load balancer itself does (bare metal's one announcing node, a router's ECMP, a cloud's documented
// behaviour) or a test that cannot apply to it. Each was found by reading the test and the run's log; docs/conformance.md's
// table (table.ts) shows them beside the outcomes, and a test that fails without one says so.
import type { Explanation } from "./table.ts";

export const EXPLANATIONS: readonly Explanation[] = [
  {
    setups: ["l2", "bgp"],
    test: "should be able to switch session affinity for LoadBalancer service with Local traffic policy",
    why:
      "A client's connections reach the cluster through one node: on L2 the node announcing the address (ARP " +
      "answers with one MAC; MetalLB's L2 mode behaves the same), through the BGP router the node its hash of the " +
      "client's address picks (the set-up's router hashes addresses, not ports, as ClientIP affinity through ECMP " +
      "needs: MetalLB's BGP documentation describes both). With Local that node sends only to its own endpoints: " +
      "with three pods on three nodes one pod answers every connection, so with affinity turned off the test never " +
      'sees a second one ("Affinity shouldn\'t hold but did").',
  },
  {
    setups: ["eks"],
    test: "should be able to preserve UDP traffic when server pod cycles",
    why:
      "The test sends its datagrams to `net.UDPAddr{IP: ParseIPSloppy(ingress)}`: an NLB's ingress is a DNS name, " +
      "as AWS gives it (status.loadBalancer.ingress[].hostname), which parses to no address, so every datagram " +
      'goes to the runner\'s own port 80 ("Connected successfully to: :80") and no backend is ever heard ' +
      '("Failed to connect to backend 1"). The test needs an IP ingress, which no NLB has. Its probing goroutine ' +
      'outlives the failed test and fails whichever test runs next ("Failed to hit the 2 UDP LoadBalancer ' +
      'backends", loadbalancer.go:894): the test so hit in a full run is rerun alone.',
  },
  {
    setups: ["eks"],
    test: "ExternalTrafficPolicy: Local should work",
    why:
      'Skipped by the test itself when the ingress has no IP (loadbalancer.go: `ingress.IP == ""`, reported as ' +
      "\"LoadBalancer uses 'Proxy' IPMode\"): an NLB's ingress is its DNS name, as on AWS. The client's address " +
      "kept for Local is checked by the end-to-end suite instead (e2e clientAddress: instance targets keep it).",
  },
  {
    setups: ["eks"],
    test: "should be able to change the type and ports of a UDP service",
    why:
      "Every step passes (NodePort, the NLB, a new node port, a new port, scaled to 0 and back) up to the last: " +
      "once the Service is ClusterIP again Portico deletes the NLB and its DNS name stops resolving, as on AWS (the " +
      "Elastic Load Balancing API reference, DeleteLoadBalancer: a deleted load balancer's DNS record no longer " +
      "exists), and " +
      "the test's UDP probe counts a failed lookup as an error rather than as not reachable (service.go " +
      'testNotReachableUDP: only a timeout or a refusal ends it), so it polls until "reachable after 2m0s". ' +
      "The TCP variant, whose probe counts a failed lookup as not reachable, passes.",
  },
];
