// Taking a Service's load balancer parts over from cloud-provider-azure without changing its address. Where Portico
// uses the same load balancer (the anchor's shared one, `kubernetes` on AKS, when Portico's loadBalancerName
// names it), the Service's frontend is renamed as Portico names it in the write that puts Portico's rules and
// probes in place of cloud-provider-azure's: the frontend keeps its public IP (or private address) throughout.
// The load balancer is marked as taken over and is never deleted, even once no frontend is left on it: Portico did
// not make it. Where Portico uses another load balancer, the Service's frontend, rules and probes leave the old
// one first (a public IP serves one load balancer at a time), and the public IP moves with its address. Pure edits
// on the load balancer as read, like loadBalancerEdit.ts.
import { childId, sameId } from "./ids.ts";
import { CLOUD_PROVIDER_AZURE, cpaFrontendNames } from "./cloudProviderAzure.ts";
import type { DesiredService, LoadBalancer } from "./model.ts";
import { belongsTo, TAG } from "./names.ts";

type Frontend = NonNullable<LoadBalancer["frontendIPConfigurations"]>[number];

/** cloud-provider-azure's frontend of the Service's side on this load balancer, carrying the address it wants. */
export function legacyFrontend(lb: LoadBalancer | undefined, d: DesiredService): Frontend | undefined {
  const subnet = d.frontend.kind === "internal" ? d.frontend.subnetId.split("/").pop() : undefined;
  const names = cpaFrontendNames(d.service.uid, d.family, subnet);
  const want = d.frontend;
  return lb?.frontendIPConfigurations?.find(
    (f) =>
      names.includes(f.name ?? "") &&
      (want.kind === "public"
        ? sameId(f.publicIPAddress?.id, want.publicIpId)
        : sameId(f.subnet?.id, want.subnetId) && (!want.privateIp || f.privateIPAddress === want.privateIp)),
  );
}

/**
 * The load balancer with cloud-provider-azure's frontend of the Service renamed as Portico's, and its rules and
 * probes gone (withService puts Portico's in their place in the same write); `lb` itself when there is none, when
 * Portico's frontend is there already, or when another cluster's Portico owns the load balancer.
 */
export function withLegacyRenamed(lb: LoadBalancer, d: DesiredService): LoadBalancer {
  const legacy = legacyFrontend(lb, d);
  const owner = lb.tags?.[TAG.cluster];
  if (!legacy || (owner !== undefined && owner !== d.cluster) || d.loadBalancer.perService) return lb;
  if (lb.frontendIPConfigurations?.some((f) => f.name === d.frontendName)) return lb;
  const renamed: Frontend = {
    name: d.frontendName,
    ...(legacy.publicIPAddress
      ? { publicIPAddress: { id: legacy.publicIPAddress.id } }
      : {
          subnet: { id: legacy.subnet?.id },
          privateIPAllocationMethod: legacy.privateIPAllocationMethod ?? "Dynamic",
          privateIPAddressVersion: legacy.privateIPAddressVersion ?? "IPv4",
          ...(legacy.privateIPAddress ? { privateIPAddress: legacy.privateIPAddress } : {}),
        }),
    ...(legacy.zones?.length ? { zones: legacy.zones } : {}),
  };
  const without = withoutLegacy(lb, legacy.name!);
  return {
    ...without,
    tags: { ...lb.tags, [TAG.cluster]: d.cluster, [TAG.adoptedFrom]: CLOUD_PROVIDER_AZURE },
    frontendIPConfigurations: [...(without.frontendIPConfigurations ?? []), renamed],
  };
}

/**
 * The load balancer without one of cloud-provider-azure's frontends: the rules using it, and the probes only
 * those rules used (its own, `<frontend>-<PROTOCOL>-<port>`; a probe other rules share stays). Never undefined:
 * the load balancer is not Portico's to delete.
 */
export function withoutLegacy(lb: LoadBalancer, frontend: string): LoadBalancer {
  const target = lb.frontendIPConfigurations?.find((f) => f.name === frontend);
  if (!target) return lb;
  const id = target.id ?? childId(lb.id ?? "", "frontendIPConfigurations", frontend);
  const uses = (r: { frontendIPConfiguration?: { id?: string } }) =>
    sameId(r.frontendIPConfiguration?.id, id) || r.frontendIPConfiguration?.id?.endsWith(`/${frontend}`);
  const rules = lb.loadBalancingRules ?? [];
  const gone = rules.filter(uses);
  const kept = rules.filter((r) => !gone.includes(r));
  const stillUsed = (probe: { id?: string; name?: string }) =>
    kept.some((r) => sameId(r.probe?.id, probe.id) || r.probe?.id?.split("/").pop() === probe.name);
  const probes = (lb.probes ?? []).filter(
    (p) =>
      stillUsed(p) ||
      !(belongsTo(p.name, frontend) || gone.some((r) => r.probe?.id?.split("/").pop() === p.name)),
  );
  return {
    ...lb,
    frontendIPConfigurations: (lb.frontendIPConfigurations ?? []).filter((f) => f !== target),
    loadBalancingRules: kept,
    probes,
    // Outbound and inbound NAT rules naming the frontend would keep it; cloud-provider-azure's Service frontends
    // have none.
  };
}

/** Load balancers other than the target where cloud-provider-azure's frontend of the Service holds its public IP. */
export function legacyElsewhere(
  loadBalancers: LoadBalancer[],
  d: DesiredService,
): { loadBalancer: string; frontend: string }[] {
  if (d.frontend.kind !== "public") return [];
  return loadBalancers.flatMap((lb) => {
    if (lb.name?.toLowerCase() === d.loadBalancer.name.toLowerCase()) return [];
    const legacy = legacyFrontend(lb, d);
    return legacy ? [{ loadBalancer: lb.name ?? "", frontend: legacy.name ?? "" }] : [];
  });
}

/** A load balancer Portico took over keeps existing when Portico's last frontend leaves it. */
export const takenOver = (lb: LoadBalancer): boolean => lb.tags?.[TAG.adoptedFrom] !== undefined;
