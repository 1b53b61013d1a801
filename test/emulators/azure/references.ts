// Who uses what. ARM's read-only back-references (publicIPAddress.ipConfiguration, subnet.ipConfigurations,
// networkSecurityGroup.subnets, probe.loadBalancingRules...) and its in-use checks on delete are both answered
// from the current state by these queries, never from stored copies.
import { referencedResourceNotProvisioned } from "./errors.ts";
import { childId, sameId } from "./ids.ts";
import type { FrontendIpConfiguration, LoadBalancer, LoadBalancingRule, NetworkResource } from "./model.ts";
import type { Store } from "./store.ts";

export interface FrontendUse {
  lb: LoadBalancer;
  frontend: FrontendIpConfiguration;
  frontendId: string;
}

function frontendUses(store: Store, matches: (f: FrontendIpConfiguration) => boolean): FrontendUse[] {
  const uses: FrontendUse[] = [];
  for (const lb of store.ofType("loadBalancers"))
    for (const frontend of lb.properties.frontendIPConfigurations)
      if (matches(frontend))
        uses.push({ lb, frontend, frontendId: childId(lb.id, "frontendIPConfigurations", frontend.name) });
  return uses;
}

export const frontendsUsingPublicIp = (store: Store, pipId: string): FrontendUse[] =>
  frontendUses(store, (f) => sameId(f.publicIPAddressId, pipId));

export const frontendsInSubnet = (store: Store, subnetId: string): FrontendUse[] =>
  frontendUses(store, (f) => sameId(f.subnetId, subnetId));

export function subnetsUsingNsg(store: Store, nsgId: string): string[] {
  const ids: string[] = [];
  for (const vnet of store.ofType("virtualNetworks"))
    for (const subnet of vnet.properties.subnets)
      if (sameId(subnet.networkSecurityGroupId, nsgId)) ids.push(childId(vnet.id, "subnets", subnet.name));
  return ids;
}

/** The load-balancing rules of `lb` whose `field` points at `targetId`, as `{ id }` references. */
export function rulesReferencing(
  lb: LoadBalancer,
  field: "frontendIPConfigurationId" | "backendAddressPoolId" | "probeId",
  targetId: string,
): { id: string }[] {
  return lb.properties.loadBalancingRules
    .filter((rule: LoadBalancingRule) => sameId(rule[field], targetId))
    .map((rule) => ({ id: childId(lb.id, "loadBalancingRules", rule.name) }));
}

export function outboundRulesReferencing(
  lb: LoadBalancer,
  field: "frontend" | "pool",
  targetId: string,
): { id: string }[] {
  return lb.properties.outboundRules
    .filter((rule) =>
      field === "pool"
        ? sameId(rule.backendAddressPoolId, targetId)
        : rule.frontendIPConfigurationIds.some((id) => sameId(id, targetId)),
    )
    .map((rule) => ({ id: childId(lb.id, "outboundRules", rule.name) }));
}

/**
 * NRP refuses, with a retryable 429, a write that references a resource whose own operation has not finished: the
 * client is expected to wait for that resource and try again.
 */
export function assertReferenceProvisioned(
  referenced: NetworkResource,
  referencingId: string,
  retryAfterSeconds: number,
): void {
  if (referenced.provisioningState === "Updating" || referenced.provisioningState === "Deleting")
    throw referencedResourceNotProvisioned(
      referenced.id,
      referencingId,
      referenced.provisioningState,
      referenced.lastOperationName,
      retryAfterSeconds,
    );
}
