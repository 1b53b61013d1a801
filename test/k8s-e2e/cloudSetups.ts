// The cloud set-ups Kubernetes' own LoadBalancer tests run against, on the local cluster with its cluster DNS:
//   eks  Portico from the eks overlay against the AWS emulator, the NLBs carried by the emulated edge
//        (cloudEdge/eksOnEmulator.ts, the same code as the end-to-end tests'), the pods resolving the NLBs'
//        names through the edge's DNS;
//   aks  Portico from the aks overlay against the Azure emulator, its load balancers carried by the Azure edge.
// The runner (e2e.test) is the edge's internet client: a host outside the cloud's network (203.0.113.0/24, off
// the nodes' /16, which the ExternalTrafficPolicy: Local tests require of a client whose address must be
// preserved), resolving NLB names through the edge as an internet client resolves them through AWS's DNS, and
// reaching the apiserver through the edge and the LAN's gateway.
import { aksOnCluster } from "../harness/cloudEdge/aksOnEmulator.ts";
import { EDGE_SITES } from "../harness/cloudEdge/addresses.ts";
import { eksOnCluster, NLB_DNS_ZONE } from "../harness/cloudEdge/eksOnEmulator.ts";
import { teardownList, type CloudCluster } from "../harness/cloudEdge/teardown.ts";
import type { ForwardedZone } from "../harness/localCluster/clusterDns.ts";
import type { LocalCluster } from "../harness/localCluster/cluster.ts";
import { IP, sh } from "../harness/netns.ts";

export type CloudSetupName = "eks" | "aks";

/**
 * The tests' Services name no class: Portico serves them as the cluster's load balancer, as a user whose
 * Services predate Portico (or name no class because the cloud's own controller served them) sets it.
 */
const DEFAULT_LOAD_BALANCER = [
  { op: "add", path: "/spec/template/spec/containers/0/args/-", value: "--default-load-balancer" },
];

/** The cluster DNS's forwarded zones for a set-up: on EKS, the NLBs' names go to the edge's DNS. */
export function cloudDnsZones(name: CloudSetupName): ForwardedZone[] {
  return name === "eks" ? [{ zone: NLB_DNS_ZONE, server: EDGE_SITES.nlb.address }] : [];
}

/**
 * Installs Portico from the set-up's overlay with its emulator and edge on `cluster`; resolves to the runner's
 * namespace. Everything started is handed to `cleanups`, to be undone before the cluster stops.
 */
export async function startCloud(
  name: CloudSetupName,
  cluster: LocalCluster,
  porticoImage: string,
  cleanups: (() => Promise<void>)[],
): Promise<{ namespace: string }> {
  const { defer, undo } = teardownList();
  cleanups.push(undo);
  const view: CloudCluster = {
    kubeconfig: cluster.kubeconfig,
    client: cluster.client,
    nodes: cluster.nodes.map((n) => n.describe()),
    porticoImage,
  };
  const opts = { dataPlane: true, defer, controllerPatches: DEFAULT_LOAD_BALANCER };
  const { edge } = name === "eks" ? await eksOnCluster(view, opts) : await aksOnCluster(view, opts);
  const site = name === "eks" ? EDGE_SITES.nlb : EDGE_SITES.azure;
  // The apiserver's forwarder in the LAN's namespace answers the runner through the edge, as the nodes do.
  await sh(IP, ["-n", cluster.lan.lanNamespace, "route", "replace", site.internet.cidr, "via", site.address]);
  return { namespace: edge!.internetClient };
}
