// What the bare-metal allocator needs from the cluster, read from the shared cache: the IPAddressPools (Portico's,
// and MetalLB's when the controller reads them), and the addresses every Service this controller took on already
// holds (from its status, oldest first), so a restarted controller rebuilds exactly the allocations it had and
// never hands an address out twice.
import type { V1Service } from "@kubernetes/client-node";
import type { Assignment } from "../providers/metal/allocationTypes.ts";
import type { MetalInventory } from "../providers/metal/provider.ts";
import { SHARING_ANNOTATIONS } from "../providers/metal/request.ts";
import type { ClusterCache } from "./cache.ts";
import { tookOn, type ClassConfig } from "./classes.ts";

export function metalInventory(cache: ClusterCache, classes: ClassConfig): MetalInventory {
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
    assignments: () =>
      cache.services
        .list()
        .filter((s) => tookOn(s, classes) && s.status?.loadBalancer?.ingress?.some((i) => i.ip))
        .sort(oldestFirst)
        .map(assignment),
    nodeAddresses: () =>
      cache.nodes.list().map((n) => ({
        name: n.metadata!.name!,
        addresses: (n.status?.addresses ?? [])
          .filter((a) => a.type === "InternalIP" || a.type === "ExternalIP")
          .map((a) => a.address),
      })),
    announcements: (namespace, name) => cache.announcements(namespace, name),
  };
}

function assignment(svc: V1Service): Assignment {
  const annotations = svc.metadata?.annotations ?? {};
  const sharingKey = SHARING_ANNOTATIONS.map((a) => annotations[a]).find(Boolean);
  return {
    serviceKey: `${svc.metadata!.namespace}/${svc.metadata!.name}`,
    addresses: (svc.status?.loadBalancer?.ingress ?? []).flatMap((i) => (i.ip ? [i.ip] : [])),
    ...(sharingKey ? { sharingKey } : {}),
    ports: (svc.spec?.ports ?? []).map((p) => ({ protocol: p.protocol ?? "TCP", port: p.port })),
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
