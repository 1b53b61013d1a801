// What the bare-metal allocator needs from the cluster, read from the shared cache: the IPAddressPools (Portico's,
// and MetalLB's when the controller reads them), and the addresses every Service this controller took on already
// holds (from its status, oldest first), so a restarted controller rebuilds exactly the allocations it had and
// never hands an address out twice. Services it serves but has not addressed yet (moved over from MetalLB, or
// given an address by hand) come after them: their addresses are kept where a pool has them free
// (providers/metal/inherited.ts), and counted from the start, so no other Service takes them meanwhile.
import type { V1Node, V1Service } from "@kubernetes/client-node";
import { sharingBackend, type Assignment } from "../../shared/allocationTypes.ts";
import type { MetalInventory } from "./provider.ts";
import type { NodeAddresses } from "./poolFindings.ts";
import { INHERITED_REFUSALS } from "./inherited.ts";
import { SHARING_ANNOTATIONS } from "../../shared/request.ts";
import type { ClusterView } from "../cluster.ts";
import { tookOn, wantsLoadBalancer, type ClassConfig } from "../classes.ts";
import { READY_CONDITION } from "../../shared/conditions.ts";

export function metalInventory(cache: ClusterView, classes: ClassConfig): MetalInventory {
  return {
    pools: () => [
      ...(cache.pools?.list() ?? []).map((p) => ({ name: p.metadata!.name!, spec: p.spec })),
      ...cache.metallbPoolList().map((p) => ({
        name: p.metadata!.name!,
        spec: p.spec,
        group: "metallb.io" as const,
        namespace: p.metadata!.namespace!,
      })),
    ],
    assignments: () => {
      const addressed = cache.services
        .list()
        .filter((s) => s.status?.loadBalancer?.ingress?.some((i) => i.ip))
        .sort(oldestFirst);
      const own = addressed.filter((s) => tookOn(s, classes) && reportedOn(s));
      const inherited = addressed.filter((s) => !own.includes(s) && wantsLoadBalancer(s, classes));
      return [
        ...own.map(assignment),
        ...inherited.map((s): Assignment => ({ ...assignment(s), inherited: true })),
      ];
    },
    statusAddresses: (namespace, name) =>
      (serviceOf(cache, namespace, name)?.status?.loadBalancer?.ingress ?? []).flatMap((i) =>
        i.ip ? [i.ip] : [],
      ),
    nodeAddresses: () => {
      // The cache's list is the same (frozen) array until a node changes: its addresses are read once for it.
      const nodes = cache.allNodes?.() ?? cache.nodes.list();
      if (!Object.isFrozen(nodes)) return nodes.map(addressesOf);
      let addresses = NODE_ADDRESSES.get(nodes);
      if (!addresses) NODE_ADDRESSES.set(nodes, (addresses = nodes.map(addressesOf)));
      return addresses;
    },
    announcements: (namespace, name) => cache.announcements?.(namespace, name),
  };
}

const NODE_ADDRESSES = new WeakMap<readonly V1Node[], NodeAddresses[]>();

function addressesOf(n: V1Node): NodeAddresses {
  return {
    name: n.metadata!.name!,
    addresses: (n.status?.addresses ?? [])
      .filter((a) => a.type === "InternalIP" || a.type === "ExternalIP")
      .map((a) => a.address),
  };
}

/** The Service from the cache; porticoctl's snapshot of the cluster can only list. */
function serviceOf(cache: ClusterView, namespace: string, name: string): V1Service | undefined {
  const services = cache.services;
  if (services.get) return services.get(name, namespace);
  return services.list().find((s) => s.metadata?.namespace === namespace && s.metadata.name === name);
}

/**
 * Portico has said how the Service is served (its Ready condition), other than refusing the address in its status
 * (inherited.ts): the address there is Portico's own. Taking a Service on comes first, so one just taken on by
 * another worker, not reported on yet, still has the address it came with.
 */
function reportedOn(svc: V1Service): boolean {
  const ready = svc.status?.conditions?.find((c) => c.type === READY_CONDITION);
  return ready !== undefined && !(INHERITED_REFUSALS as readonly string[]).includes(ready.reason ?? "");
}

function assignment(svc: V1Service): Assignment {
  const annotations = svc.metadata?.annotations ?? {};
  const sharingKey = SHARING_ANNOTATIONS.map((a) => annotations[a]).find(Boolean);
  return {
    serviceKey: `${svc.metadata!.namespace}/${svc.metadata!.name}`,
    addresses: (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : [])),
    ...(sharingKey ? { sharingKey } : {}),
    ports: (svc.spec?.ports ?? []).map((p) => ({ protocol: p.protocol ?? "TCP", port: p.port })),
    backend: sharingBackend(
      svc.spec?.externalTrafficPolicy === "Local" ? "Local" : "Cluster",
      svc.spec?.selector,
    ),
  };
}

function oldestFirst(a: V1Service, b: V1Service): number {
  const t = (s: V1Service) => new Date(s.metadata?.creationTimestamp ?? 0).getTime();
  return (
    t(a) - t(b) ||
    `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(
      `${b.metadata?.namespace}/${b.metadata?.name}`,
    )
  );
}
