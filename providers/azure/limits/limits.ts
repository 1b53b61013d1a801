// Azure's documented limits on what the cluster's Services share: the load balancers' frontends and rules, the
// rules reaching each backend address, and the network security group's rules and addresses. ARM refuses a write
// that goes past one, but only once the writes before it have happened: the Service's public IP made, its
// frontend and rules on the load balancer before the security group refuses its rules. So the provider checks,
// between observing and writing, what the counts would be once this Service's change is made, and refuses the
// Service itself (a ConfigurationError) while nothing has been written. Pure, so unit-tested exhaustively.
//
// The public IP quota (per subscription and region) is not checked here: it counts public IPs of every resource
// group of the subscription, which Portico neither reads nor may read. Creating the public IP is the Service's
// first write, so when ARM refuses it nothing of the Service exists yet either.
//
// Two Services changed at the same moment are each checked against the observation before the other's write; ARM
// still refuses whichever write goes past a limit then, and the next reconcile reports it through this check.
import { Address4, Address6 } from "ip-address";
import { ConfigurationError } from "../../errors.ts";
import { AZURE_ANNOTATIONS } from "../annotations/settings.ts";
import { holdsService, withoutService, withService } from "../loadBalancer/loadBalancerEdit.ts";
import type { DesiredService, LoadBalancer, NetworkSecurityGroup, Observed } from "../model.ts";
import { ownedLoadBalancer } from "../plan/plan.ts";
import { isPorticoRule, withServiceRules } from "../security/rulesEdit.ts";
import { AZURE_LIMITS, type AzureLimits } from "./limitValues.ts";

export { AZURE_LIMITS, type AzureLimits } from "./limitValues.ts";

/** Whether a count goes past its limit, and further than it already was: a change that lowers a count passes. */
const over = (limit: number, before: number, after: number): boolean =>
  limit > 0 && after > limit && after > before;

/**
 * Throws a ConfigurationError, naming the Service's field and the fix, when writing `d` over what is observed
 * would take a shared load balancer or the security group past one of `limits`. The counts are those of the
 * resources after the same pure edits the writes make, so the Service's own existing parts count once.
 */
export function assertWithinLimits(
  d: DesiredService,
  observed: Observed,
  limits: Partial<AzureLimits> = {},
): void {
  const l = { ...AZURE_LIMITS, ...limits };
  checkLoadBalancers(d, observed.loadBalancers, l);
  if (d.securityRules && observed.securityGroup) checkSecurityGroup(d, observed.securityGroup, l);
}

/**
 * The same for every family's side of a Service, each counted over what the sides before it add: a dual-stack
 * Service adds two frontends and a rule per port and family.
 */
export function assertSidesWithinLimits(
  sides: DesiredService[],
  observed: Observed,
  limits: Partial<AzureLimits> = {},
): void {
  let now = observed;
  for (const [i, d] of sides.entries()) {
    assertWithinLimits(d, now, limits);
    // What this side adds matters only to the sides after it.
    if (i === sides.length - 1) break;
    const name = d.loadBalancer.name.toLowerCase();
    const target = now.loadBalancers.find((lb) => lb.name?.toLowerCase() === name);
    // Named as ARM names it, so that the next side finds it.
    const changed = { ...withService(target, d), name: target?.name ?? d.loadBalancer.name };
    const nsg = now.securityGroup;
    now = {
      ...now,
      loadBalancers: [...now.loadBalancers.filter((lb) => lb !== target), changed],
      ...(nsg && d.securityRules
        ? {
            securityGroup: withServiceRules(nsg, {
              frontend: d.frontendName,
              description: d.securityRuleDescription,
              rules: d.securityRules,
              // Counted as one address whether known or not (checkSecurityGroup); a stand-in keeps the rule.
              frontendAddress: d.family === "IPv6" ? "::" : "0.0.0.0",
            }),
          }
        : {}),
    };
  }
}

function checkLoadBalancers(d: DesiredService, before: LoadBalancer[], l: AzureLimits): void {
  const name = d.loadBalancer.name.toLowerCase();
  const target = before.find((lb) => lb.name?.toLowerCase() === name);
  const changed = withService(target, d);
  // The Service's parts leave the load balancers of the cluster it moves away from (as the plan removes them).
  const after = before.flatMap((lb): LoadBalancer[] => {
    if (lb === target) return [changed];
    if (!ownedLoadBalancer(lb, d.cluster) || !holdsService(lb, d.frontendName)) return [lb];
    const rest = withoutService(lb, d.frontendName);
    return rest ? [rest] : [];
  });
  if (!target) after.push(changed);

  const frontends = (lb: LoadBalancer | undefined) => lb?.frontendIPConfigurations?.length ?? 0;
  const limit = l.frontendIPConfigurationsPerLoadBalancer;
  if (over(limit, frontends(target), frontends(changed)))
    throw new ConfigurationError(
      "TooManyFrontends",
      "loadBalancerPerService (controller Azure config)",
      `load balancer ${d.loadBalancer.name} would have ${frontends(changed)} frontends, one per Service, ` +
        `and Azure allows ${limit}`,
      "configure the controller with loadBalancerPerService, or delete Services that no longer need a load balancer",
    );
  const rules = (lb: LoadBalancer | undefined) => lb?.loadBalancingRules?.length ?? 0;
  if (over(l.rulesPerLoadBalancer, rules(target), rules(changed)))
    throw new ConfigurationError(
      "TooManyRules",
      "spec.ports",
      `load balancer ${d.loadBalancer.name} would have ${rules(changed)} load-balancing rules, one per port, ` +
        `and Azure allows ${l.rulesPerLoadBalancer}`,
      "use fewer ports, or configure the controller with loadBalancerPerService",
    );

  if (l.rulesPerBackendAddress <= 0) return;
  const was = rulesPerAddress(before);
  let worst: { ip: string; rules: number } | undefined;
  for (const [key, reached] of rulesPerAddress(after)) {
    if (!over(l.rulesPerBackendAddress, was.get(key)?.rules ?? 0, reached.rules)) continue;
    if (!worst || reached.rules > worst.rules) worst = reached;
  }
  if (worst)
    throw new ConfigurationError(
      "TooManyRulesPerBackend",
      // With the cluster's node pool, every instance-target rule of every Service reaches every node: the target
      // type is what put the Service there when it asked for it; by default its ports are what it adds.
      (d.pool.shared && d.fields.targetType) || "spec.ports",
      `backend address ${worst.ip} would be reached by ${worst.rules} load-balancing rules and Azure allows ` +
        `${l.rulesPerBackendAddress} per backend address, over all load balancers`,
      `use ip targets (${AZURE_ANNOTATIONS.targetType}: ip), so the rules reach pods instead of every node, ` +
        "or fewer ports",
    );
}

/**
 * For each backend address (virtual network and IP) of the pools of `lbs`, how many rules use a pool holding it.
 * Pools of NICs (not IP addresses) are not Portico's and have no address to read here; they are not counted.
 */
function rulesPerAddress(lbs: LoadBalancer[]): Map<string, { ip: string; rules: number }> {
  const out = new Map<string, { ip: string; rules: number }>();
  for (const lb of lbs)
    for (const [key, { ip, rules }] of rulesPerAddressOf(lb)) {
      const seen = out.get(key);
      if (seen) seen.rules += rules;
      else out.set(key, { ip, rules });
    }
  return out;
}

/**
 * One load balancer's counts, remembered per object (load balancers are never changed in place): every Service
 * counts every load balancer, before and after its change, and all but one are the observed ones, unchanged.
 */
function rulesPerAddressOf(lb: LoadBalancer): ReadonlyMap<string, { ip: string; rules: number }> {
  let known = RULES_PER_ADDRESS.get(lb);
  if (!known) RULES_PER_ADDRESS.set(lb, (known = countRulesPerAddress(lb)));
  return known;
}
const RULES_PER_ADDRESS = new WeakMap<LoadBalancer, ReadonlyMap<string, { ip: string; rules: number }>>();

function countRulesPerAddress(lb: LoadBalancer): Map<string, { ip: string; rules: number }> {
  const out = new Map<string, { ip: string; rules: number }>();
  const perPool = new Map<string, number>();
  for (const r of lb.loadBalancingRules ?? []) {
    const pool = poolName(r.backendAddressPool?.id ?? r.backendAddressPools?.[0]?.id);
    if (pool) perPool.set(pool, (perPool.get(pool) ?? 0) + 1);
  }
  for (const pool of lb.backendAddressPools ?? []) {
    const rules = perPool.get(pool.name?.toLowerCase() ?? "") ?? 0;
    if (!rules) continue;
    for (const a of pool.loadBalancerBackendAddresses ?? []) {
      if (!a.ipAddress) continue;
      const key = `${(a.virtualNetwork?.id ?? "").toLowerCase()}|${a.ipAddress}`;
      const seen = out.get(key);
      if (seen) seen.rules += rules;
      else out.set(key, { ip: a.ipAddress, rules });
    }
  }
  return out;
}

const poolName = (id: string | undefined): string | undefined => id?.split("/").pop()?.toLowerCase();

function checkSecurityGroup(d: DesiredService, nsg: NetworkSecurityGroup, l: AzureLimits): void {
  const desired = d.securityRules ?? [];
  const existing = nsg.securityRules ?? [];
  const others = existing.filter((r) => !isPorticoRule(r, d.frontendName));
  const group = nsg.name ?? "the cluster's network security group";

  const rulesAfter = others.length + desired.length;
  if (over(l.securityRulesPerGroup, existing.length, rulesAfter))
    throw new ConfigurationError(
      "TooManySecurityRules",
      "spec.ports",
      `network security group ${group} would have ${rulesAfter} rules, one per port and allowed source, ` +
        `and Azure allows ${l.securityRulesPerGroup}`,
      `use fewer ports or allowed service tags, or remove unused rules from ${group}`,
    );

  const limit = l.addressPrefixesPerSecurityGroup;
  const count = (rules: typeof existing, side: "source" | "destination") =>
    rules.reduce((n, r) => n + addressesOf(r, side), 0);
  // The destinations as the desired rules name them (backend addresses, or prefixes covering them); a floating
  // IP rule names the frontend's one address, whether or not it is known yet.
  const sourcesAfter =
    count(others, "source") + desired.reduce((n, r) => n + r.sources.filter(isAddress).length, 0);
  const destinationsAfter =
    count(others, "destination") +
    desired.reduce(
      (n, r) => n + (r.destination === "frontend" ? 1 : r.destination.filter(isAddress).length),
      0,
    );
  if (over(limit, count(existing, "source"), sourcesAfter))
    throw new ConfigurationError(
      "TooManySecurityRuleAddresses",
      // Only a Service adding addresses goes over: those it lists.
      d.fields.sources ?? "spec.ports",
      `the rules of network security group ${group} would name ${sourcesAfter} source addresses and ranges, ` +
        `and Azure allows ${limit}`,
      "use fewer, wider source ranges, or fewer ports",
    );
  // Without floating IP a rule names the Service's backends; with it, only the frontend's address.
  const floating = desired.some((r) => r.destination === "frontend");
  if (over(limit, count(existing, "destination"), destinationsAfter))
    throw new ConfigurationError(
      "TooManySecurityRuleAddresses",
      // Floating IP turned off by the Service's annotation, or off by default (then its ports are what it adds).
      (!floating && d.fields.floatingIP) || "spec.ports",
      `the rules of network security group ${group} would name ${destinationsAfter} destination addresses and ` +
        `ranges, and Azure allows ${limit}`,
      floating
        ? `use fewer ports, or remove unused rules from ${group}`
        : `use floating IP with instance targets (${AZURE_ANNOTATIONS.floatingIP}: "true"), so each rule ` +
            "names only the frontend's address, or fewer ports",
    );
}

type SecurityRule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];

function addressesOf(r: SecurityRule, side: "source" | "destination"): number {
  const one = side === "source" ? r.sourceAddressPrefix : r.destinationAddressPrefix;
  const many = side === "source" ? r.sourceAddressPrefixes : r.destinationAddressPrefixes;
  return [...(one ? [one] : []), ...(many ?? [])].filter(isAddress).length;
}

/** Addresses and ranges count towards Azure's limit; service tags (Internet, VirtualNetwork, ...) and `*` do not. */
function isAddress(text: string): boolean {
  // Remembered: ip-address tells an invalid address by throwing, which at a group of 1000 rules' sources and
  // destinations, counted on every reconcile, cost more than everything else a reconcile does.
  let known = ADDRESS_MEMO.get(text);
  if (known === undefined) {
    if (ADDRESS_MEMO.size >= ADDRESS_MEMO_MAX) ADDRESS_MEMO.clear();
    ADDRESS_MEMO.set(text, (known = Address4.isValid(text) || Address6.isValid(text)));
  }
  return known;
}
const ADDRESS_MEMO = new Map<string, boolean>();
const ADDRESS_MEMO_MAX = 100_000;
