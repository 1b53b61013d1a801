// What the speaker needs to know about Kubernetes objects, extracted into plain values: which Services it
// announces (and at which addresses), where their ready endpoints run, and which Nodes may announce at
// all. Pure functions over the API objects, so the rules are unit-tested without an apiserver.
import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import { canonicalIP } from "../shared/address.ts";
import { eligibleNodes, type Policy } from "../shared/nodeEligibility.ts";
import { findPool } from "./addressPool.ts";
import type { AnnouncePool } from "./pools.ts";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

export interface ClassSelection {
  readonly loadBalancerClass: string;
  /** Also announce LoadBalancer Services that name no class. */
  readonly defaultForUnclassed: boolean;
}

export interface AnnouncedService {
  /** namespace/name */
  readonly key: string;
  /** Canonical addresses from status.loadBalancer.ingress[].ip, without duplicates. */
  readonly addresses: readonly string[];
  /** externalTrafficPolicy Local: only nodes with a ready endpoint may announce. */
  readonly local: boolean;
  /** Nodes running at least one ready endpoint. */
  readonly endpointNodes: ReadonlySet<string>;
  /** Any ready endpoint at all (with or without a node name); without one the Service is not announced. */
  readonly hasReadyEndpoint: boolean;
  /** The pool (its key) each address came from; addresses in no pool are absent. */
  readonly pools: ReadonlyMap<string, string>;
  /** What advertisements' serviceSelectors match. */
  readonly labels: Readonly<Record<string, string>>;
  /** Addresses in overlapping pools whose pool the Service does not record, so the speaker guessed it. */
  readonly guessedPools?: readonly string[];
}

export function serviceKey(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

export function isAnnouncedClass(service: V1Service, classes: ClassSelection): boolean {
  if (service.spec?.type !== "LoadBalancer") return false;
  const cls = service.spec.loadBalancerClass;
  return cls === undefined || cls === null ? classes.defaultForUnclassed : cls === classes.loadBalancerClass;
}

export function ingressAddresses(service: V1Service): string[] {
  const addresses = new Set<string>();
  for (const ingress of service.status?.loadBalancer?.ingress ?? []) {
    const canonical = ingress.ip ? canonicalIP(ingress.ip.trim()) : undefined;
    if (canonical) addresses.add(canonical);
  }
  return [...addresses];
}

/** Endpoints count as ready unless their `ready` condition says false (the API defines nil as ready). */
export function readyEndpoints(slices: readonly V1EndpointSlice[]): {
  endpointNodes: Set<string>;
  hasReadyEndpoint: boolean;
} {
  const endpointNodes = new Set<string>();
  let hasReadyEndpoint = false;
  for (const slice of slices) {
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false || (endpoint.addresses ?? []).length === 0) continue;
      hasReadyEndpoint = true;
      if (endpoint.nodeName) endpointNodes.add(endpoint.nodeName);
    }
  }
  return { endpointNodes, hasReadyEndpoint };
}

/** Every Service this speaker announces, with the endpoint and pool facts the election needs. */
export function announcedServices(
  services: readonly V1Service[],
  slices: readonly V1EndpointSlice[],
  classes: ClassSelection,
  pools: readonly AnnouncePool[] = [],
): AnnouncedService[] {
  const slicesByService = new Map<string, V1EndpointSlice[]>();
  for (const slice of slices) {
    const name = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    if (!name) continue;
    const key = `${slice.metadata?.namespace ?? ""}/${name}`;
    slicesByService.set(key, [...(slicesByService.get(key) ?? []), slice]);
  }
  const result: AnnouncedService[] = [];
  for (const service of services) {
    if (!isAnnouncedClass(service, classes)) continue;
    const addresses = ingressAddresses(service);
    if (addresses.length === 0) continue;
    const key = serviceKey(service);
    const found = addressPools(service, addresses, pools);
    result.push({
      key,
      addresses,
      local: service.spec?.externalTrafficPolicy === "Local",
      ...readyEndpoints(slicesByService.get(key) ?? []),
      pools: found.pools,
      labels: service.metadata?.labels ?? {},
      ...(found.guessed.length ? { guessedPools: found.guessed } : {}),
    });
  }
  return result.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function addressPools(
  service: V1Service,
  addresses: readonly string[],
  pools: readonly AnnouncePool[],
): { pools: Map<string, string>; guessed: string[] } {
  const result = new Map<string, string>();
  const guessed: string[] = [];
  if (pools.length === 0) return { pools: result, guessed };
  const facts = {
    namespace: service.metadata?.namespace ?? "",
    labels: service.metadata?.labels ?? {},
    annotations: service.metadata?.annotations ?? {},
  };
  for (const address of addresses) {
    const found = findPool(address, facts, pools);
    if (!found) continue;
    result.set(address, found.pool.key);
    if (found.source === "guessed") guessed.push(address);
  }
  return { pools: result, guessed };
}

/**
 * The Nodes that may announce a Service of the traffic policy: those that may carry load-balancer traffic
 * (shared/nodeEligibility.ts: Ready, and not deleted, excluded, about to be removed by the autoscaler or, for
 * Cluster, cordoned); liveness of their speakers is checked separately.
 */
export function schedulableNodes(nodes: readonly V1Node[], policy: Policy = "Cluster"): Set<string> {
  return new Set(
    eligibleNodes(nodes, [], policy)
      .map((node) => node.metadata?.name ?? "")
      .filter(Boolean),
  );
}

/** Where each Node's speaker listens for membership traffic: its first InternalIP (else any address). */
export function nodeAddresses(nodes: readonly V1Node[]): Map<string, string> {
  const result = new Map<string, string>();
  for (const node of nodes) {
    const name = node.metadata?.name;
    const addresses = node.status?.addresses ?? [];
    const address = (
      addresses.find((a) => a.type === "InternalIP") ?? addresses.find((a) => canonicalIP(a.address))
    )?.address;
    const canonical = address ? canonicalIP(address) : undefined;
    if (name && canonical) result.set(name, canonical);
  }
  return result;
}
