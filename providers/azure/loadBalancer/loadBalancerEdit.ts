// Edits of a load balancer that many Services share. Pure: each takes the load balancer as last read and returns
// it with one Service's parts (frontend, pool, probes, rules, record tag) put in place or taken out, touching
// nothing else; an edit that changes nothing returns its input itself. They run again on a fresh read whenever a
// write loses a race (412), so they must not depend on anything but their arguments.
import { ConfigurationError } from "../../errors.ts";
import { childId, nameOf, sameId } from "../arm/ids.ts";
import type { DesiredService, LoadBalancer, PoolSpec, ProbeSpec, RuleSpec } from "../model.ts";
import { belongsTo, isNodePool, MAX_TAGS, TAG } from "../names.ts";
import {
  assertPortsFree,
  frontendIdOf,
  releaseFrontend,
  sharedFrontend,
} from "../publicIps/sharedFrontends.ts";
import { takenOver, withLegacyRenamed } from "../adoption/adoption.ts";
import { configField } from "../annotations/fields.ts";

type Frontend = NonNullable<LoadBalancer["frontendIPConfigurations"]>[number];
type Pool = NonNullable<LoadBalancer["backendAddressPools"]>[number];
type Probe = NonNullable<LoadBalancer["probes"]>[number];
type Rule = NonNullable<LoadBalancer["loadBalancingRules"]>[number];

export const recordTag = (frontend: string): string => `${TAG.frontendPrefix}${frontend}`;

/**
 * The load balancer with the Service's parts as desired (created when `read` is undefined). cloud-provider-azure's
 * frontend of the Service, if the load balancer has it, becomes Portico's in the same write
 * (adoption/adoption.ts).
 */
export function withService(read: LoadBalancer | undefined, d: DesiredService): LoadBalancer {
  // Remembered per load balancer and desired state (neither is changed in place): a reconcile's limit check and
  // its plan both make the same edit of the same observed load balancer.
  if (!read) return editedWith(read, d);
  let edits = EDITS.get(read);
  if (!edits) EDITS.set(read, (edits = new WeakMap()));
  let known = edits.get(d);
  if (!known) edits.set(d, (known = editedWith(read, d)));
  return known;
}
const EDITS = new WeakMap<LoadBalancer, WeakMap<DesiredService, LoadBalancer>>();

function editedWith(read: LoadBalancer | undefined, d: DesiredService): LoadBalancer {
  const lb = read && withLegacyRenamed(read, d);
  if (lb) assertOwned(lb, d);
  const base: LoadBalancer = lb ?? {
    location: d.location,
    sku: { name: "Standard", tier: "Regional" },
    tags: d.loadBalancer.tags,
    frontendIPConfigurations: [],
    backendAddressPools: [],
    probes: [],
    loadBalancingRules: [],
  };
  const lbId = lb?.id ?? d.loadBalancer.id;
  const fe = d.frontendName;
  const poolId = childId(lbId, "backendAddressPools", d.pool.name);
  const tags = { ...base.tags };
  if (d.recordOnLoadBalancer) tags[recordTag(fe)] = `${d.service.namespace}/${d.service.name}`;
  else delete tags[recordTag(fe)];
  if (Object.keys(tags).length > MAX_TAGS) throw loadBalancerFull(d);
  // The Service's own rules go first, so that what remains on its frontend is other Services' (publicIps/sharedFrontends.ts).
  let rest: LoadBalancer = {
    ...base,
    tags,
    loadBalancingRules: (base.loadBalancingRules ?? []).filter((r) => !belongsTo(r.name, fe)),
  };
  const shared = sharedFrontend(rest, fe, d.frontend);
  const current = rest.frontendIPConfigurations?.find((f) => f.name === fe);
  // Renamed from cloud-provider-azure's in this write: ARM gives a new frontend a new dynamic address.
  const renamed = current !== undefined && !read?.frontendIPConfigurations?.some((f) => f.name === fe);
  const wanted = shared ? undefined : frontendBody(d, current, renamed);
  // Leaving its frontend (for another Service's, or for another address) hands it to Services still using it.
  if (current && (shared || canonicalFrontend(current) !== canonicalFrontend(wanted!)))
    rest = releaseFrontend(rest, fe);
  const frontendId = shared ? frontendIdOf(lbId, shared) : childId(lbId, "frontendIPConfigurations", fe);
  const pools = (rest.backendAddressPools ?? []).filter((p) => p.name !== fe && p.name !== d.pool.name);
  const next: LoadBalancer = {
    ...rest,
    frontendIPConfigurations: [
      ...(rest.frontendIPConfigurations ?? []).filter((f) => f.name !== fe),
      ...(wanted ? [wanted] : []),
    ],
    backendAddressPools: [...pools, poolBody(d.pool, d.vnetId)],
    probes: [...(rest.probes ?? []).filter((p) => !belongsTo(p.name, fe)), ...d.probes.map(probeBody)],
    loadBalancingRules: [
      ...(rest.loadBalancingRules ?? []),
      ...d.rules.map((r) => ruleBody(r, { lbId, frontendId, poolId })),
    ],
  };
  const address =
    d.frontend.kind === "public"
      ? `public IP ${d.publicIp?.name ?? nameOf(d.frontend.publicIpId)}`
      : `private address ${d.frontend.privateIp ?? "(dynamic)"}`;
  assertPortsFree(next, fe, shared?.name ?? fe, address);
  const pruned = withoutUnusedNodePool(next);
  return read && canonical(read) === canonical(pruned) ? read : pruned;
}

/**
 * A Service recorded on the load balancer (recordTag) because no public IP Portico made for it records it: an
 * internal one, or one on a public IP it names. The refusal names that field, and the fix that fits it.
 */
function loadBalancerFull(d: DesiredService): ConfigurationError {
  const field = d.fields.record ?? configField("loadBalancerPerService");
  const internal = d.loadBalancer.internal;
  return new ConfigurationError(
    "LoadBalancerFull",
    field,
    `load balancer ${d.loadBalancer.name} already records ${MAX_TAGS - 2} Services in its tags, all ARM allows: ` +
      (internal
        ? "each internal Service is recorded there"
        : "each Service on a public IP Portico did not make for it is recorded there"),
    internal
      ? "configure the controller with loadBalancerPerService, or spread Services over several load balancers (multipleStandardLoadBalancerConfigurations)"
      : `configure the controller with loadBalancerPerService, or remove ${field.replace(/^metadata\.annotations\[(.*)\]$/, "$1")} so that Portico makes the Service a public IP of its own`,
  );
}

/**
 * The load balancer without the Service's parts; undefined when no frontend is left and the load balancer
 * itself should go. Returns `lb` itself when it holds nothing of the Service.
 */
export function withoutService(lb: LoadBalancer, frontend: string): LoadBalancer | undefined {
  if (!holdsService(lb, frontend)) return lb;
  const next: LoadBalancer = releaseFrontend(
    {
      ...lb,
      tags: Object.fromEntries(Object.entries(lb.tags ?? {}).filter(([k]) => k !== recordTag(frontend))),
      backendAddressPools: (lb.backendAddressPools ?? []).filter((p) => p.name !== frontend),
      probes: (lb.probes ?? []).filter((p) => !belongsTo(p.name, frontend)),
      loadBalancingRules: (lb.loadBalancingRules ?? []).filter((r) => !belongsTo(r.name, frontend)),
    },
    frontend,
  );
  if (canonical(next) === canonical(lb)) return lb;
  // One Portico took over stays: it did not make it.
  if (!next.frontendIPConfigurations?.length) return takenOver(lb) ? withoutUnusedNodePool(next) : undefined;
  return withoutUnusedNodePool(next);
}

/** Whether the load balancer holds any part of the Service. */
export function holdsService(lb: LoadBalancer, frontend: string): boolean {
  // Exactly what withoutService takes out (its record tag, its frontend, pool, probes and rules), looked up
  // without copying and comparing the whole load balancer, which every reconcile does for every load balancer.
  const record = recordTag(frontend);
  return (
    Object.keys(lb.tags ?? {}).includes(record) ||
    (lb.frontendIPConfigurations ?? []).some((f) => f.name === frontend) ||
    (lb.backendAddressPools ?? []).some((p) => p.name === frontend) ||
    (lb.probes ?? []).some((p) => belongsTo(p.name, frontend)) ||
    (lb.loadBalancingRules ?? []).some((r) => belongsTo(r.name, frontend))
  );
}

function assertOwned(lb: LoadBalancer, d: DesiredService): void {
  const tags = lb.tags ?? {};
  const ours =
    tags[TAG.cluster] === d.cluster && (!d.loadBalancer.perService || tags[TAG.serviceUid] === d.service.uid);
  if (!ours)
    throw new ConfigurationError(
      "LoadBalancerNameTaken",
      d.loadBalancer.perService ? "metadata.uid" : "loadBalancerName (controller Azure config)",
      `a load balancer named ${lb.name} exists that Portico did not make for this cluster`,
      "configure another load balancer name; Portico never adopts or changes what it did not create",
    );
  if (lb.sku?.name !== "Standard")
    throw new ConfigurationError(
      "LoadBalancerNotStandard",
      "loadBalancerName (controller Azure config)",
      `load balancer ${lb.name} is ${lb.sku?.name ?? "Basic"}`,
      "let Portico make a Standard one under another name",
    );
}

function frontendBody(d: DesiredService, current: Frontend | undefined, renamed = false): Frontend {
  const f = d.frontend;
  if (f.kind === "public") return { name: d.frontendName, publicIPAddress: { id: f.publicIpId } };
  const keep =
    !f.privateIp && sameId(current?.subnet?.id, f.subnetId) ? current?.privateIPAddress : undefined;
  // A frontend renamed in this write is new to ARM, which keeps the address only when it is asked for (Static);
  // the next write makes it dynamic again, and ARM keeps a frontend's address when only its allocation changes.
  const pinned = f.privateIp !== undefined || (renamed && keep !== undefined);
  return {
    name: d.frontendName,
    subnet: { id: f.subnetId },
    privateIPAllocationMethod: pinned ? "Static" : "Dynamic",
    privateIPAddressVersion: f.family ?? "IPv4",
    // A dynamic address is ARM's to choose; sending back the one it chose keeps it.
    ...(f.privateIp ? { privateIPAddress: f.privateIp } : keep ? { privateIPAddress: keep } : {}),
  };
}

function poolBody(pool: PoolSpec, vnetId: string): Pool {
  return {
    name: pool.name,
    loadBalancerBackendAddresses: pool.addresses.map((a) => ({
      name: a.name,
      ipAddress: a.ip,
      virtualNetwork: { id: vnetId },
      ...(a.adminState ? { adminState: a.adminState } : {}),
    })),
  };
}

function probeBody(p: ProbeSpec): Probe {
  return {
    name: p.name,
    protocol: p.protocol,
    port: p.port,
    intervalInSeconds: p.intervalInSeconds,
    numberOfProbes: p.numberOfProbes,
    ...(p.requestPath ? { requestPath: p.requestPath } : {}),
  };
}

function ruleBody(r: RuleSpec, ids: { lbId: string; frontendId: string; poolId: string }): Rule {
  const tcp = r.protocol === "Tcp";
  return {
    name: r.name,
    frontendIPConfiguration: { id: ids.frontendId },
    backendAddressPool: { id: ids.poolId },
    backendAddressPools: [{ id: ids.poolId }],
    ...(r.probe ? { probe: { id: childId(ids.lbId, "probes", r.probe) } } : {}),
    protocol: r.protocol,
    frontendPort: r.frontendPort,
    backendPort: r.backendPort,
    enableFloatingIP: r.floatingIP,
    ...(tcp ? { idleTimeoutInMinutes: r.idleTimeoutInMinutes, enableTcpReset: r.tcpReset ?? true } : {}),
    // Portico's load balancers are for inbound traffic; the cluster's outbound path is set up elsewhere.
    disableOutboundSnat: true,
    loadDistribution: r.loadDistribution,
  };
}

/** A shared node pool (of either family) goes once no rule uses it (the last instance-target Service left or changed). */
function withoutUnusedNodePool(lb: LoadBalancer): LoadBalancer {
  const pools = lb.backendAddressPools ?? [];
  const rules = lb.loadBalancingRules ?? [];
  const unused = pools.filter((p) => isNodePool(p.name) && !rules.some((r) => nameOfPool(r) === p.name));
  return unused.length ? { ...lb, backendAddressPools: pools.filter((p) => !unused.includes(p)) } : lb;
}

const nameOfPool = (r: Rule): string | undefined =>
  (r.backendAddressPool?.id ?? r.backendAddressPools?.[0]?.id)?.split("/").pop();

const lc = (s: string | undefined): string => (s ?? "").toLowerCase();
/**
 * Sorted by lower-cased name in code-unit order: canonical() forms are only compared with each other, so any fixed
 * order does, and localeCompare made this most of a reconcile's CPU on load balancers with hundreds of children.
 */
const byName = <T extends { name?: string }>(list: T[] | undefined): T[] =>
  (list ?? [])
    .map((item) => ({ item, key: lc(item.name) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ item }) => item);

/** A frontend's address source, as canonical() compares frontends. */
function canonicalFrontend(f: Frontend): string {
  return JSON.stringify([
    lc(f.publicIPAddress?.id),
    lc(f.subnet?.id),
    f.subnet ? (f.privateIPAllocationMethod ?? "Dynamic") : "",
    f.privateIPAllocationMethod === "Static" ? f.privateIPAddress : "",
  ]);
}

/** Everything a write would change, in a form that compares equal exactly when the writes would be the same. */
export function canonical(lb: LoadBalancer): string {
  // Remembered per object: load balancers here are never changed in place (every edit makes a new one), and the
  // one observed is compared again by each Service that reads it, on each candidate load balancer and in each
  // write, which at hundreds of rules made this the largest part of a reconcile.
  let known = CANONICAL.get(lb);
  if (known === undefined) CANONICAL.set(lb, (known = canonicalOf(lb)));
  return known;
}
const CANONICAL = new WeakMap<LoadBalancer, string>();

function canonicalOf(lb: LoadBalancer): string {
  return JSON.stringify({
    tags: Object.entries(lb.tags ?? {}).sort(([a], [b]) => a.localeCompare(b)),
    frontends: byName(lb.frontendIPConfigurations).map((f) => [
      f.name,
      lc(f.publicIPAddress?.id),
      lc(f.subnet?.id),
      f.subnet ? (f.privateIPAllocationMethod ?? "Dynamic") : "",
      f.privateIPAllocationMethod === "Static" ? f.privateIPAddress : "",
    ]),
    pools: byName(lb.backendAddressPools).map((p) => [
      p.name,
      byName(p.loadBalancerBackendAddresses).map((a) => [
        a.name,
        a.ipAddress,
        lc(a.virtualNetwork?.id),
        a.adminState === "Down" ? "Down" : "",
      ]),
    ]),
    probes: byName(lb.probes).map((p) => [
      p.name,
      p.protocol,
      p.port,
      p.requestPath ?? "",
      p.intervalInSeconds ?? 15,
      p.numberOfProbes ?? 2,
    ]),
    rules: byName(lb.loadBalancingRules).map((r) => [
      r.name,
      r.protocol,
      r.frontendPort,
      r.backendPort,
      lc(r.frontendIPConfiguration?.id),
      lc(r.backendAddressPool?.id ?? r.backendAddressPools?.[0]?.id),
      lc(r.probe?.id),
      r.enableFloatingIP ?? false,
      r.protocol === "Tcp" ? (r.idleTimeoutInMinutes ?? 4) : 0,
      r.enableTcpReset ?? false,
      r.disableOutboundSnat ?? false,
      r.loadDistribution ?? "Default",
    ]),
  });
}
