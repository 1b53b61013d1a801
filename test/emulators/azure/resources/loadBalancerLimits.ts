// Azure's documented load balancer limits (limits.ts), checked after a write is otherwise valid: frontends and
// rules per load balancer, addresses per pool, the backend IP configurations rules reach per frontend and per
// load balancer, and the rules reaching one backend address over every load balancer of the subscription.
import { childId, idKey, parseNetworkId } from "../ids.ts";
import type { Context } from "../kinds.ts";
import { limitFor } from "../limits.ts";
import type { BackendAddress, BackendAddressPool, LoadBalancer } from "../model.ts";
import {
  backendAddressRuleCountLimitReached,
  backendPoolSizeLimitReached,
  backendsPerFrontendLimitReached,
  backendsPerLoadBalancerLimitReached,
  frontendCountLimitReached,
  ruleCountLimitReached,
} from "../networkErrors.ts";

/** A backend address as Azure tells them apart: its virtual network and IP. */
function addressOf(pool: BackendAddressPool, a: BackendAddress): { key: string; vnetId: string } | undefined {
  const vnetId =
    a.virtualNetworkId ??
    (a.subnetId ? parseNetworkId(a.subnetId)?.parentId : undefined) ??
    pool.virtualNetworkId;
  return a.ipAddress && vnetId ? { key: `${idKey(vnetId)}|${a.ipAddress}`, vnetId } : undefined;
}

/** How many rules (load-balancing and outbound) use each pool of `lb`, by the pool's ID. */
function rulesPerPool(lb: LoadBalancer): Map<string, number> {
  const counts = new Map<string, number>();
  const pools = [
    ...lb.properties.loadBalancingRules.map((r) => r.backendAddressPoolId),
    ...lb.properties.outboundRules.map((r) => r.backendAddressPoolId),
  ];
  for (const id of pools) if (id) counts.set(idKey(id), (counts.get(idKey(id)) ?? 0) + 1);
  return counts;
}

function checkBackendAddresses(lb: LoadBalancer, ctx: Context): void {
  const limit = limitFor(ctx.config.limits, "rulesPerBackendAddress");
  if (limit === undefined) return;
  const reached = new Map<string, { ip: string; vnetId: string; rules: number }>();
  const tally = (other: LoadBalancer, onlyKnown: boolean): void => {
    const perPool = rulesPerPool(other);
    for (const pool of other.properties.backendAddressPools) {
      const rules = perPool.get(idKey(childId(other.id, "backendAddressPools", pool.name))) ?? 0;
      if (!rules) continue;
      for (const a of pool.loadBalancerBackendAddresses) {
        const address = addressOf(pool, a);
        if (!address) continue;
        const seen = reached.get(address.key);
        if (seen) seen.rules += rules;
        else if (!onlyKnown) reached.set(address.key, { ip: a.ipAddress!, vnetId: address.vnetId, rules });
      }
    }
  };
  tally(lb, false);
  for (const other of ctx.store.ofType("loadBalancers"))
    if (idKey(other.id) !== idKey(lb.id)) tally(other, true);
  for (const { ip, vnetId, rules } of reached.values())
    if (rules > limit) throw backendAddressRuleCountLimitReached(ip, vnetId, lb.id, rules, limit);
}

export function admitLoadBalancerLimits(lb: LoadBalancer, ctx: Context): void {
  const p = lb.properties;
  const sku = lb.sku?.name ?? "Basic";
  const limit = (name: Parameters<typeof limitFor>[1]): number =>
    limitFor(ctx.config.limits, name, sku) ?? Infinity;
  if (p.frontendIPConfigurations.length > limit("frontendIPConfigurationsPerLoadBalancer"))
    throw frontendCountLimitReached(sku, lb.id, limit("frontendIPConfigurationsPerLoadBalancer"));
  if (p.loadBalancingRules.length > limit("rulesPerLoadBalancer"))
    throw ruleCountLimitReached(sku, lb.id, limit("rulesPerLoadBalancer"));
  const poolSize = new Map<string, number>();
  for (const pool of p.backendAddressPools) {
    const pid = childId(lb.id, "backendAddressPools", pool.name);
    const size = pool.loadBalancerBackendAddresses.length;
    if (size > limit("addressesPerBackendPool"))
      throw backendPoolSizeLimitReached(pid, size, limit("addressesPerBackendPool"));
    poolSize.set(idKey(pid), size);
  }
  const perFrontend = new Map<string, { id: string; count: number }>();
  let total = 0;
  const reach = (frontends: string[], poolId: string | undefined): void => {
    const size = poolId ? (poolSize.get(idKey(poolId)) ?? 0) : 0;
    for (const fid of frontends) {
      const entry = perFrontend.get(idKey(fid)) ?? { id: fid, count: 0 };
      entry.count += size;
      perFrontend.set(idKey(fid), entry);
    }
    total += size;
  };
  for (const rule of p.loadBalancingRules)
    reach([rule.frontendIPConfigurationId!], rule.backendAddressPoolId);
  for (const rule of p.outboundRules) reach(rule.frontendIPConfigurationIds, rule.backendAddressPoolId);
  for (const { id, count } of perFrontend.values())
    if (count > limit("backendAddressesPerFrontend"))
      throw backendsPerFrontendLimitReached(id, count, limit("backendAddressesPerFrontend"));
  if (total > limit("backendAddressesPerLoadBalancer"))
    throw backendsPerLoadBalancerLimitReached(lb.id, total, limit("backendAddressesPerLoadBalancer"));
  checkBackendAddresses(lb, ctx);
}
