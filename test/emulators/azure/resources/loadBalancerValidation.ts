// Everything NRP checks before it accepts a load balancer write: references inside the load balancer and to other
// resources, SKU rules, documented ranges, port clashes between rules, private address assignment, and the
// documented limits.
import { childId, idKey, sameId } from "../ids.ts";
import { containsIp, firstFreeAddress, ipToBigInt, isReservedAddress, parsePrefix } from "../ipam.ts";
import type { Context } from "../kinds.ts";
import type {
  BackendAddressPool,
  FrontendIpConfiguration,
  LoadBalancer,
  LoadBalancingRule,
} from "../model.ts";
import {
  duplicateChildName,
  frontendHasBothSubnetAndPublicIp,
  frontendHasNoSubnetOrPublicIp,
  haPortsNotAllowed,
  invalidBackendAddress,
  invalidResourceReference,
  ipBasedPoolRequiresStandard,
  missingRequiredProperty,
  privateIpInUse,
  privateIpNotInSubnet,
  probeRequestPathIsNotNull,
  probeRequestPathIsNull,
  propertyOutOfRange,
  publicIpAndLbSkuDoNotMatch,
  publicIpInUseByAnotherResource,
  publicIpReferencedByMultipleIpConfigs,
  rulesUseSameBackendPortProtocolAndPool,
  rulesUseSameFrontendPortAndProtocol,
  subnetFull,
} from "../networkErrors.ts";
import { assertReferenceProvisioned, frontendsInSubnet, frontendsUsingPublicIp } from "../references.ts";
import { admitIpVersions } from "./ipVersions.ts";
import { admitLoadBalancerLimits } from "./loadBalancerLimits.ts";
import { findSubnet } from "./virtualNetworks.ts";

function checkRange(what: string, id: string, value: number, min: number, max: number): void {
  if (value < min || value > max) throw propertyOutOfRange(what, id, value, min, max);
}

function assertUniqueNames(lb: LoadBalancer): void {
  const p = lb.properties;
  const lists: [string, { name: string }[]][] = [
    ["frontendIPConfigurations", p.frontendIPConfigurations],
    ["backendAddressPools", p.backendAddressPools],
    ["loadBalancingRules", p.loadBalancingRules],
    ["probes", p.probes],
    ["outboundRules", p.outboundRules],
  ];
  for (const [segment, list] of lists) {
    const seen = new Set<string>();
    for (const { name } of list) {
      if (seen.has(name.toLowerCase())) throw duplicateChildName(lb.id, segment, name);
      seen.add(name.toLowerCase());
    }
  }
}

function admitPublicFrontend(
  lb: LoadBalancer,
  f: FrontendIpConfiguration,
  fid: string,
  twins: Set<string>,
  ctx: Context,
): void {
  const pipId = f.publicIPAddressId!;
  const pip = ctx.store.getOfType(pipId, "publicIPAddresses");
  if (!pip || pip.location !== lb.location) throw invalidResourceReference(pipId, fid);
  const lbSku = lb.sku?.name ?? "Basic";
  const pipSku = pip.sku?.name ?? "Basic";
  if (lbSku !== pipSku) throw publicIpAndLbSkuDoNotMatch(lbSku, lb.id, pipSku, pip.id);
  if (twins.has(idKey(pipId))) throw publicIpReferencedByMultipleIpConfigs(pip.id, lb.id);
  const other = frontendsUsingPublicIp(ctx.store, pipId).find((u) => !sameId(u.lb.id, lb.id));
  if (other) throw publicIpInUseByAnotherResource(pip.id, other.frontendId, fid);
  assertReferenceProvisioned(pip, lb.id, ctx.config.retryAfterSeconds);
}

/** Validates a private frontend and gives it its address: kept if already assigned, else the first free one. */
function admitPrivateFrontend(
  lb: LoadBalancer,
  existing: LoadBalancer | undefined,
  f: FrontendIpConfiguration,
  fid: string,
  ctx: Context,
): void {
  const found = findSubnet(ctx.store, f.subnetId!);
  if (!found || found.vnet.location !== lb.location) throw invalidResourceReference(f.subnetId!, fid);
  assertReferenceProvisioned(found.vnet, lb.id, ctx.config.retryAfterSeconds);
  const version = f.privateIPAddressVersion === "IPv6" ? 6 : 4;
  const prefix = found.subnet.addressPrefixes.map(parsePrefix).find((p) => p?.version === version);
  if (!prefix) throw invalidResourceReference(f.subnetId!, fid);
  const used = new Map<string, string>();
  for (const u of frontendsInSubnet(ctx.store, f.subnetId!))
    if (!sameId(u.lb.id, lb.id) && u.frontend.privateIPAddress)
      used.set(u.frontend.privateIPAddress, u.frontendId);
  for (const o of lb.properties.frontendIPConfigurations)
    if (o !== f && o.privateIPAddress && sameId(o.subnetId, f.subnetId))
      used.set(o.privateIPAddress, childId(lb.id, "frontendIPConfigurations", o.name));
  if (f.privateIPAllocationMethod === "Static") {
    if (!f.privateIPAddress) throw missingRequiredProperty("privateIPAddress", fid);
    if (!containsIp(prefix, f.privateIPAddress) || isReservedAddress(prefix, f.privateIPAddress))
      throw privateIpNotInSubnet(f.privateIPAddress, f.subnetId!, prefix.text);
    const holder = used.get(f.privateIPAddress);
    if (holder) throw privateIpInUse(f.privateIPAddress, holder);
    return;
  }
  const before = existing?.properties.frontendIPConfigurations.find((o) => sameId(o.name, f.name));
  if (before?.privateIPAddress && sameId(before.subnetId, f.subnetId) && !used.has(before.privateIPAddress)) {
    f.privateIPAddress = before.privateIPAddress;
    return;
  }
  const free = firstFreeAddress(prefix, new Set(used.keys()));
  if (!free) throw subnetFull(f.subnetId!);
  f.privateIPAddress = free;
}

function admitPool(lb: LoadBalancer, pool: BackendAddressPool, ctx: Context): void {
  const pid = childId(lb.id, "backendAddressPools", pool.name);
  const addresses = pool.loadBalancerBackendAddresses;
  if (addresses.length && lb.sku?.name !== "Standard") throw ipBasedPoolRequiresStandard(pid);
  if (pool.virtualNetworkId && !ctx.store.getOfType(pool.virtualNetworkId, "virtualNetworks"))
    throw invalidResourceReference(pool.virtualNetworkId, pid);
  const seenIps = new Set<string>();
  let poolVnet = pool.virtualNetworkId;
  for (const a of addresses) {
    if (!a.ipAddress) throw invalidBackendAddress(pid, `backend address ${a.name} has no ipAddress.`);
    const ip = ipToBigInt(a.ipAddress);
    if (!ip) throw invalidBackendAddress(pid, `${a.ipAddress} is not a valid IP address.`);
    if (seenIps.has(a.ipAddress))
      throw invalidBackendAddress(pid, `IP address ${a.ipAddress} appears more than once.`);
    seenIps.add(a.ipAddress);
    let vnetId = a.virtualNetworkId;
    if (a.subnetId) {
      const found = findSubnet(ctx.store, a.subnetId);
      if (!found) throw invalidResourceReference(a.subnetId, pid);
      vnetId ??= found.vnet.id;
    }
    vnetId ??= pool.virtualNetworkId;
    if (!vnetId)
      throw invalidBackendAddress(
        pid,
        `backend address ${a.name} must reference a virtual network or a subnet.`,
      );
    const vnet = ctx.store.getOfType(vnetId, "virtualNetworks");
    if (!vnet) throw invalidResourceReference(vnetId, pid);
    if (poolVnet && !sameId(poolVnet, vnetId))
      throw invalidBackendAddress(
        pid,
        "all backend addresses of a pool must be in the same virtual network.",
      );
    poolVnet = vnetId;
    const inSpace = vnet.properties.addressPrefixes.some((t) => {
      const prefix = parsePrefix(t);
      return prefix !== undefined && containsIp(prefix, a.ipAddress!);
    });
    if (!inSpace)
      throw invalidBackendAddress(
        pid,
        `IP address ${a.ipAddress} is not in the address space of virtual network ${vnet.id}.`,
      );
  }
}

function admitProbes(lb: LoadBalancer): void {
  for (const probe of lb.properties.probes) {
    const id = childId(lb.id, "probes", probe.name);
    if (!probe.protocol) throw missingRequiredProperty("protocol", id);
    if (probe.port === undefined) throw missingRequiredProperty("port", id);
    checkRange("Port", id, probe.port, 1, 65535);
    checkRange("IntervalInSeconds", id, probe.intervalInSeconds, 5, 2147483646);
    checkRange("NumberOfProbes", id, probe.numberOfProbes, 1, 2147483647);
    checkRange("ProbeThreshold", id, probe.probeThreshold, 1, 2147483647);
    if (probe.protocol === "Tcp" && probe.requestPath !== undefined)
      throw probeRequestPathIsNotNull(id, probe.protocol);
    if (probe.protocol !== "Tcp" && !probe.requestPath) throw probeRequestPathIsNull(id, probe.protocol);
  }
}

const protocolsOverlap = (a: string, b: string): boolean => a === b || a === "All" || b === "All";

/**
 * The rules accepted so far, by frontend and port and by pool and backend port, so that a rule is compared only
 * with those it could clash with. `find` answers as comparing with each earlier rule in order would: the first
 * earlier rule that clashes, and on the frontend before the pool when one rule clashes on both.
 */
class RuleClashes {
  private readonly byFrontend = new Map<string, { rule: LoadBalancingRule; id: string; order: number }[]>();
  private readonly byPool = new Map<string, { rule: LoadBalancingRule; id: string; order: number }[]>();
  private count = 0;

  private static frontendKey = (r: LoadBalancingRule): string =>
    `${idKey(r.frontendIPConfigurationId!)}|${r.frontendPort}`;
  private static poolKey = (r: LoadBalancingRule): string =>
    `${idKey(r.backendAddressPoolId!)}|${r.backendPort}`;

  find(rule: LoadBalancingRule): { id: string; on: "frontend" | "pool" } | undefined {
    const overlapping = (list: { rule: LoadBalancingRule; order: number; id: string }[] | undefined) =>
      (list ?? []).find((o) => protocolsOverlap(o.rule.protocol!, rule.protocol!));
    const onFrontend = overlapping(this.byFrontend.get(RuleClashes.frontendKey(rule)));
    const onPool =
      !rule.enableFloatingIP && rule.backendAddressPoolId
        ? overlapping(this.byPool.get(RuleClashes.poolKey(rule)))
        : undefined;
    if (onFrontend && (!onPool || onFrontend.order <= onPool.order))
      return { id: onFrontend.id, on: "frontend" };
    return onPool ? { id: onPool.id, on: "pool" } : undefined;
  }

  add(rule: LoadBalancingRule, id: string): void {
    const entry = { rule, id, order: this.count++ };
    const file = (map: typeof this.byFrontend, key: string): void => {
      const list = map.get(key);
      if (list) list.push(entry);
      else map.set(key, [entry]);
    };
    file(this.byFrontend, RuleClashes.frontendKey(rule));
    // A floating-IP rule never clashes on its pool, either way round.
    if (!rule.enableFloatingIP && rule.backendAddressPoolId) file(this.byPool, RuleClashes.poolKey(rule));
  }
}

function admitRules(lb: LoadBalancer): void {
  const p = lb.properties;
  // Children's IDs by segment, so that each reference is checked without scanning its list.
  const ids = new Map<string, Set<string>>();
  const has = (segment: string, list: { name: string }[], id: string): boolean => {
    let known = ids.get(segment);
    if (!known) ids.set(segment, (known = new Set(list.map((c) => idKey(childId(lb.id, segment, c.name))))));
    return known.has(idKey(id));
  };
  const clashes = new RuleClashes();
  for (const rule of p.loadBalancingRules) {
    const id = childId(lb.id, "loadBalancingRules", rule.name);
    if (!rule.frontendIPConfigurationId) throw missingRequiredProperty("frontendIPConfiguration", id);
    if (!rule.protocol) throw missingRequiredProperty("protocol", id);
    if (rule.frontendPort === undefined) throw missingRequiredProperty("frontendPort", id);
    if (rule.backendPort === undefined) throw missingRequiredProperty("backendPort", id);
    if (!has("frontendIPConfigurations", p.frontendIPConfigurations, rule.frontendIPConfigurationId))
      throw invalidResourceReference(rule.frontendIPConfigurationId, id);
    if (
      rule.backendAddressPoolId &&
      !has("backendAddressPools", p.backendAddressPools, rule.backendAddressPoolId)
    )
      throw invalidResourceReference(rule.backendAddressPoolId, id);
    if (rule.probeId && !has("probes", p.probes, rule.probeId))
      throw invalidResourceReference(rule.probeId, id);
    checkRange("FrontendPort", id, rule.frontendPort, 0, 65534);
    checkRange("BackendPort", id, rule.backendPort, 0, 65535);
    if (rule.frontendPort === 0 || rule.backendPort === 0) {
      const frontend = p.frontendIPConfigurations.find((f) =>
        sameId(childId(lb.id, "frontendIPConfigurations", f.name), rule.frontendIPConfigurationId),
      );
      const haPorts = rule.protocol === "All" && rule.frontendPort === 0 && rule.backendPort === 0;
      if (!haPorts || lb.sku?.name !== "Standard" || !frontend?.subnetId) throw haPortsNotAllowed(id);
    }
    if (rule.protocol !== "Udp") checkRange("IdleTimeoutInMinutes", id, rule.idleTimeoutInMinutes, 4, 100);
    const clash = clashes.find(rule);
    if (clash?.on === "frontend")
      throw rulesUseSameFrontendPortAndProtocol(
        clash.id,
        id,
        rule.protocol,
        rule.frontendPort,
        rule.frontendIPConfigurationId,
      );
    if (clash)
      throw rulesUseSameBackendPortProtocolAndPool(
        clash.id,
        id,
        rule.protocol,
        rule.backendPort,
        rule.backendAddressPoolId!,
      );
    clashes.add(rule, id);
  }
  for (const o of p.outboundRules) {
    const id = childId(lb.id, "outboundRules", o.name);
    for (const fe of o.frontendIPConfigurationIds)
      if (!has("frontendIPConfigurations", p.frontendIPConfigurations, fe))
        throw invalidResourceReference(fe, id);
    if (!o.backendAddressPoolId) throw missingRequiredProperty("backendAddressPool", id);
    if (!has("backendAddressPools", p.backendAddressPools, o.backendAddressPoolId))
      throw invalidResourceReference(o.backendAddressPoolId, id);
  }
}

export function admitLoadBalancer(lb: LoadBalancer, existing: LoadBalancer | undefined, ctx: Context): void {
  assertUniqueNames(lb);
  // Public IPs two frontends of this load balancer share (counted once, not per frontend).
  const twins = new Set<string>();
  const seenPublicIps = new Set<string>();
  for (const f of lb.properties.frontendIPConfigurations) {
    if (!f.publicIPAddressId) continue;
    const key = idKey(f.publicIPAddressId);
    if (seenPublicIps.has(key)) twins.add(key);
    seenPublicIps.add(key);
  }
  for (const f of lb.properties.frontendIPConfigurations) {
    const fid = childId(lb.id, "frontendIPConfigurations", f.name);
    if (!f.publicIPAddressId && !f.subnetId) throw frontendHasNoSubnetOrPublicIp(fid);
    if (f.publicIPAddressId && f.subnetId) throw frontendHasBothSubnetAndPublicIp(fid);
    if (f.publicIPAddressId) admitPublicFrontend(lb, f, fid, twins, ctx);
    else admitPrivateFrontend(lb, existing, f, fid, ctx);
  }
  for (const pool of lb.properties.backendAddressPools) admitPool(lb, pool, ctx);
  admitProbes(lb);
  admitRules(lb);
  admitIpVersions(lb, ctx);
  admitLoadBalancerLimits(lb, ctx);
}
