// What NRP checks about IP versions in a load balancer: an IPv6 frontend needs a Standard load balancer, an
// IP-based backend pool holds addresses of one version, and a load-balancing rule joins a frontend and a pool of
// the same version (Azure load balancers translate neither IPv4 to IPv6 nor back). Azure documents these rules
// but publishes no error code for them; the codes below are the emulator's own, named after NRP's conventions.
import { ArmError } from "../errors.ts";
import { childId } from "../ids.ts";
import { ipToBigInt } from "../ipam.ts";
import type { Context } from "../kinds.ts";
import type { BackendAddressPool, FrontendIpConfiguration, LoadBalancer } from "../model.ts";

type Version = "IPv4" | "IPv6";
const badRequest = (code: string, message: string): ArmError => new ArmError(400, code, message);

function frontendVersion(f: FrontendIpConfiguration, ctx: Context): Version {
  if (f.publicIPAddressId) {
    const pip = ctx.store.getOfType(f.publicIPAddressId, "publicIPAddresses");
    return pip?.properties.publicIPAddressVersion ?? "IPv4";
  }
  return f.privateIPAddressVersion;
}

/** The version of a pool's addresses; undefined for a pool without addresses (it may serve either). */
function poolVersion(lb: LoadBalancer, pool: BackendAddressPool): Version | undefined {
  const versions = new Set(
    pool.loadBalancerBackendAddresses
      .map((a) => ipToBigInt(a.ipAddress ?? "")?.version)
      .filter((v): v is 4 | 6 => v !== undefined),
  );
  if (versions.size > 1)
    throw badRequest(
      "BackendAddressPoolMixesIpVersions",
      `Backend address pool ${childId(lb.id, "backendAddressPools", pool.name)} has IPv4 and IPv6 addresses; ` +
        "all addresses of a pool must have the same IP version.",
    );
  const [only] = versions;
  return only === undefined ? undefined : only === 6 ? "IPv6" : "IPv4";
}

export function admitIpVersions(lb: LoadBalancer, ctx: Context): void {
  const p = lb.properties;
  const frontends = new Map<string, Version>();
  for (const f of p.frontendIPConfigurations) {
    const id = childId(lb.id, "frontendIPConfigurations", f.name);
    const version = frontendVersion(f, ctx);
    if (version === "IPv6" && lb.sku?.name !== "Standard")
      throw badRequest(
        "IPv6FrontendRequiresStandardSkuLoadBalancer",
        `Frontend IP configuration ${id} is IPv6; IPv6 frontends need a Standard sku load balancer, and ` +
          `${lb.id} is ${lb.sku?.name ?? "Basic"}.`,
      );
    frontends.set(id.toLowerCase(), version);
  }
  const pools = new Map<string, Version | undefined>();
  for (const pool of p.backendAddressPools)
    pools.set(childId(lb.id, "backendAddressPools", pool.name).toLowerCase(), poolVersion(lb, pool));
  for (const rule of p.loadBalancingRules) {
    const fe = frontends.get(rule.frontendIPConfigurationId?.toLowerCase() ?? "");
    const poolId = rule.backendAddressPoolId;
    const pool = poolId ? pools.get(poolId.toLowerCase()) : undefined;
    if (!fe || !pool || fe === pool) continue;
    throw badRequest(
      "LoadBalancingRuleFrontendAndBackendIpVersionMismatch",
      `Load balancing rule ${childId(lb.id, "loadBalancingRules", rule.name)} uses ${fe} frontend ` +
        `${rule.frontendIPConfigurationId} and backend address pool ${poolId}, whose addresses are ${pool}; ` +
        "a rule's frontend and backend must have the same IP version.",
    );
  }
}
