// Who uses what. ARM's read-only back-references (publicIPAddress.ipConfiguration, subnet.ipConfigurations,
// networkSecurityGroup.subnets, probe.loadBalancingRules...) and its in-use checks on delete are both answered
// from the current state: across resources from the store's back-reference index (backReferences.ts), which each
// write updates; inside one load balancer from that load balancer alone, indexed once per rendering.
import { referencedResourceNotProvisioned } from "./errors.ts";
import { childId, idKey } from "./ids.ts";
import type { FrontendIpConfiguration, LoadBalancer, NetworkResource } from "./model.ts";
import type { Store } from "./store.ts";

export interface FrontendUse {
  lb: LoadBalancer;
  frontend: FrontendIpConfiguration;
  frontendId: string;
}

function frontendUses(
  store: Store,
  kind: "frontendPublicIp" | "frontendSubnet",
  targetId: string,
): FrontendUse[] {
  const uses: FrontendUse[] = [];
  for (const ref of store.backReferences.to(kind, targetId, store.creationOrder)) {
    const lb = store.resources.get(ref.ownerKey);
    if (lb?.type === "loadBalancers") uses.push({ lb, frontend: ref.frontend!, frontendId: ref.fromId });
  }
  return uses;
}

export const frontendsUsingPublicIp = (store: Store, pipId: string): FrontendUse[] =>
  frontendUses(store, "frontendPublicIp", pipId);

export const frontendsInSubnet = (store: Store, subnetId: string): FrontendUse[] =>
  frontendUses(store, "frontendSubnet", subnetId);

export const subnetsUsingNsg = (store: Store, nsgId: string): string[] =>
  store.backReferences.to("subnetNsg", nsgId, store.creationOrder).map((ref) => ref.fromId);

export type RuleField = "frontendIPConfigurationId" | "backendAddressPoolId" | "probeId";

/**
 * The rules of `lb` indexed by what they point at, built once per rendering of `lb` (a frontend, pool or probe
 * lists the rules that use it): `loadBalancing(field, id)` and `outbound("frontend" | "pool", id)` answer as
 * `{ id }` references, in the rules' order.
 */
export function ruleReferences(lb: LoadBalancer): {
  loadBalancing: (field: RuleField, targetId: string) => { id: string }[];
  outbound: (field: "frontend" | "pool", targetId: string) => { id: string }[];
} {
  const index = new Map<string, { id: string }[]>();
  const file = (slot: string, target: string | undefined, id: string): void => {
    if (target === undefined) return;
    const key = `${slot}|${idKey(target)}`;
    const list = index.get(key);
    if (list) list.push({ id });
    else index.set(key, [{ id }]);
  };
  for (const rule of lb.properties.loadBalancingRules) {
    const id = childId(lb.id, "loadBalancingRules", rule.name);
    for (const field of ["frontendIPConfigurationId", "backendAddressPoolId", "probeId"] as const)
      file(field, rule[field], id);
  }
  for (const rule of lb.properties.outboundRules) {
    const id = childId(lb.id, "outboundRules", rule.name);
    file("outbound-pool", rule.backendAddressPoolId, id);
    // A rule listing one frontend twice is listed once under it, as a filter over the rules would.
    for (const fid of new Set(rule.frontendIPConfigurationIds.map(idKey))) file("outbound-frontend", fid, id);
  }
  const get = (key: string): { id: string }[] => index.get(key) ?? [];
  return {
    loadBalancing: (field, targetId) => get(`${field}|${idKey(targetId)}`),
    outbound: (field, targetId) => get(`outbound-${field}|${idKey(targetId)}`),
  };
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
