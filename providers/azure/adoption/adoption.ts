// Taking a Service's load balancer parts over from cloud-provider-azure without changing its address. Where Portico
// uses the same load balancer (the anchor's shared one, `kubernetes` on AKS, when Portico's loadBalancerName
// names it), the Service's frontend is renamed as Portico names it in the write that puts Portico's rules and
// probes in place of cloud-provider-azure's: the frontend keeps its public IP (or private address) throughout.
// The load balancer is marked as taken over and is never deleted, even once no frontend is left on it: Portico did
// not make it. Where Portico uses another load balancer, the Service's frontend, rules and probes leave the old
// one first (a public IP serves one load balancer at a time), and the public IP moves with its address. Pure edits
// on the load balancer as read, like loadBalancer/loadBalancerEdit.ts.
import { childId, sameId } from "../arm/ids.ts";
import { CLOUD_PROVIDER_AZURE, cpaSide } from "./cloudProviderAzure.ts";
import type { DesiredService, LoadBalancer } from "../model.ts";
import { belongsTo, TAG } from "../names.ts";

type Frontend = NonNullable<LoadBalancer["frontendIPConfigurations"]>[number];

/** cloud-provider-azure's names for the Service's side on this load balancer (dual-stack when it has an IPv6 frontend). */
function sideOn(lb: LoadBalancer | undefined, d: DesiredService) {
  const subnet = d.frontend.kind === "internal" ? d.frontend.subnetId.split("/").pop() : undefined;
  const v6 = cpaSide(d.service.uid, "IPv6", true, subnet).frontends;
  const dual =
    d.family === "IPv6" && (lb?.frontendIPConfigurations ?? []).some((f) => v6.includes(f.name ?? ""));
  return cpaSide(d.service.uid, d.family, dual, subnet);
}

/** cloud-provider-azure's frontend of the Service's side on this load balancer, carrying the address it wants. */
export function legacyFrontend(lb: LoadBalancer | undefined, d: DesiredService): Frontend | undefined {
  const names = sideOn(lb, d).frontends;
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
 * The load balancer with cloud-provider-azure's parts of the Service's side taken out of the way of Portico's:
 * its frontend renamed as Portico's (other Services' rules sharing it, cloud-provider-azure's secondary Services,
 * pointed at the new name so that their traffic continues), its rules and probes gone (withService puts Portico's
 * in their place in the same write). `lb` itself when it has none of them, or when another cluster's Portico owns
 * the load balancer.
 */
export function withLegacyRenamed(lb: LoadBalancer, d: DesiredService): LoadBalancer {
  const owner = lb.tags?.[TAG.cluster];
  if ((owner !== undefined && owner !== d.cluster) || d.loadBalancer.perService) return lb;
  const side = sideOn(lb, d);
  const present = (lb.frontendIPConfigurations ?? []).some((f) => f.name === d.frontendName);
  const legacy = present ? undefined : legacyFrontend(lb, d);
  const rules = lb.loadBalancingRules ?? [];
  const theirs = rules.filter((r) => side.owns(r.name));
  if (!legacy && !theirs.length) return lb;
  const lbId = lb.id ?? d.loadBalancer.id;
  const legacyId = legacy && (legacy.id ?? childId(lbId, "frontendIPConfigurations", legacy.name!));
  const renamedId = childId(lbId, "frontendIPConfigurations", d.frontendName);
  const kept = rules
    .filter((r) => !theirs.includes(r))
    .map((r) =>
      legacyId && sameId(r.frontendIPConfiguration?.id, legacyId)
        ? { ...r, frontendIPConfiguration: { id: renamedId } }
        : r,
    );
  const used = (p: { id?: string; name?: string }) =>
    kept.some((r) => sameId(r.probe?.id, p.id) || r.probe?.id?.split("/").pop() === p.name);
  const frontends = (lb.frontendIPConfigurations ?? []).filter((f) => f !== legacy);
  return {
    ...lb,
    tags: { ...lb.tags, [TAG.cluster]: d.cluster, [TAG.adoptedFrom]: CLOUD_PROVIDER_AZURE },
    frontendIPConfigurations: legacy ? [...frontends, renamedFrontend(legacy, d.frontendName)] : frontends,
    loadBalancingRules: kept,
    probes: (lb.probes ?? []).filter((p) => used(p) || !side.owns(p.name)),
  };
}

/** cloud-provider-azure's frontend under Portico's name, with the same public IP or private address. */
function renamedFrontend(legacy: Frontend, name: string): Frontend {
  return {
    name,
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

/**
 * Load balancers other than the target where cloud-provider-azure's frontend of the Service holds its address:
 * its public IP, or (internal) a private address, returned so that Portico's frontend asks for it.
 */
export function legacyElsewhere(
  loadBalancers: LoadBalancer[],
  d: DesiredService,
): { loadBalancer: string; frontend: string; privateAddress?: string }[] {
  return loadBalancers.flatMap((lb) => {
    if (lb.name?.toLowerCase() === d.loadBalancer.name.toLowerCase()) return [];
    const legacy = legacyFrontend(lb, d);
    if (!legacy) return [];
    const address = d.frontend.kind === "internal" ? legacy.privateIPAddress : undefined;
    return [
      {
        loadBalancer: lb.name ?? "",
        frontend: legacy.name ?? "",
        ...(address ? { privateAddress: address } : {}),
      },
    ];
  });
}

/**
 * The Service's side asking for a private address it had on cloud-provider-azure's frontend: for the write that
 * makes Portico's frontend (a new frontend gets a new dynamic address otherwise); later writes ask for none, and
 * ARM keeps the address of a frontend that only turns dynamic.
 */
export function pinnedTo(d: DesiredService, address: string): DesiredService {
  return d.frontend.kind === "internal" && !d.frontend.privateIp
    ? { ...d, frontend: { ...d.frontend, privateIp: address } }
    : d;
}

/** A load balancer Portico took over keeps existing when Portico's last frontend leaves it. */
export const takenOver = (lb: LoadBalancer): boolean => lb.tags?.[TAG.adoptedFrom] !== undefined;
