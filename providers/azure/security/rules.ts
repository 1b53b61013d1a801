// The security rules one Service should have in the cluster's network security group: a pure function of the
// intent's source ranges, the access annotations (../annotations/access.ts) and the Service's load-balancing rules.
//
// As cloud-provider-azure does: each allowed source set (the IP ranges, each service tag) gets an allow rule per
// port; with no ranges and no tags, a public Service is open to `Internet` (an internal one to `VirtualNetwork`);
// with `azure-deny-all-except-load-balancer-source-ranges`, a Deny rule for every other source sits below the
// allows (priorities taken from the top of the range), so that the virtual network, which Azure's default
// AllowVnetInBound rule lets in, is shut out too. Traffic from outside the virtual network needs no deny rule:
// Azure's DenyAllInBound already drops whatever no rule allows.
//
// Two differences, both narrower than cloud-provider-azure: the Deny rule covers the Service's own ports, not
// every port of the address (which a shared address's other Services use); and without floating IP the rules
// name the backends, where Azure's health probes arrive on the same ports, so an allow for `AzureLoadBalancer`
// keeps the probes in when the Deny rule would otherwise drop them.
import { Address4, Address6 } from "ip-address";
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AzureServiceSettings } from "../annotations/settings.ts";
import { isOfFamily } from "../annotations/ipFamilies.ts";
import type { DesiredSecurityRule, Network, PoolSpec, RuleSpec } from "../model.ts";
import type { IpFamily } from "../names.ts";

const PROBE_SOURCE = "AzureLoadBalancer";

/** Allow (and Deny) rules in the cluster's NSG; destinations as the load balancer delivers to them. */
export function securityRules(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  rules: RuleSpec[],
  pool: PoolSpec,
  network: Network,
  family: IpFamily = "IPv4",
): DesiredSecurityRule[] {
  const given = [...intent.sourceRanges, ...settings.allowedIpRanges];
  // Each family's frontend is reached from sources of its family only: the other family's ranges allow nothing
  // there. A dual-stack Service's IPv6 side with only IPv4 ranges is then reachable by service tags alone.
  const ranges = [...new Set(given.filter((r) => isOfFamily(r, family)))].sort();
  const tags = [...new Set(settings.allowedServiceTags)];
  const sourceSets: { suffix: string; sources: string[] }[] = [];
  if (ranges.length) sourceSets.push({ suffix: "", sources: ranges });
  for (const tag of tags) sourceSets.push({ suffix: `-${tag}`, sources: [tag] });
  if (!given.length && !tags.length)
    sourceSets.push({ suffix: "", sources: [settings.internal ? "VirtualNetwork" : "Internet"] });
  const deny = settings.denyAllExceptSourceRanges;
  const backends = backendDestinations(
    pool.addresses.filter((a) => !a.adminState).map((a) => a.ip),
    network,
  );
  const out: DesiredSecurityRule[] = [];
  for (const rule of rules) {
    const destination: DesiredSecurityRule["destination"] = rule.floatingIP ? "frontend" : backends;
    if (destination !== "frontend" && destination.length === 0) continue;
    const base = {
      protocol: rule.protocol,
      destinationPort: rule.floatingIP ? rule.frontendPort : rule.backendPort,
      destination,
    };
    const sets = [...sourceSets];
    if (deny && destination !== "frontend" && !tags.includes(PROBE_SOURCE))
      sets.push({ suffix: `-${PROBE_SOURCE}`, sources: [PROBE_SOURCE] });
    for (const { suffix, sources } of sets)
      out.push({ name: `${rule.name}${suffix}`.slice(0, 80), access: "Allow", sources, ...base });
    // The suffix has a hyphen, which no service tag has, so it never meets a tag's rule name.
    if (deny) out.push({ name: `${rule.name}-deny-all`, access: "Deny", sources: ["*"], ...base });
  }
  return out;
}

/**
 * Backend addresses as the subnet prefixes that hold them. An NSG allows 4000 destination addresses across all
 * its rules, and listing every node in every Service's rules reaches that at 40 ports on 100 nodes; a subnet's
 * prefix counts once. What it opens besides the backends is other hosts of the same subnets on the same port,
 * which on node subnets are nodes that kube-proxy opens the node port on anyway. Addresses in no known subnet
 * stay listed one by one.
 */
function backendDestinations(ips: string[], network: Network): string[] {
  const prefixes = Object.values(network.subnets).flatMap((s) => s.addressPrefixes);
  const out = new Set<string>();
  for (const ip of ips) {
    const holding = prefixes
      .filter((p) => inPrefix(ip, p))
      .sort((a, b) => Number(b.split("/")[1]) - Number(a.split("/")[1]))[0];
    out.add(holding ?? ip);
  }
  return [...out].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

export function inPrefix(ip: string, prefix: string): boolean {
  // Remembered: every reconcile asks it for each of its nodes and each subnet prefix, and ip-address parses
  // both each time (telling an IPv6 prefix from an IPv4 one by throwing), which at 100 nodes and 1000 Services
  // was a tenth of the controller's CPU.
  const key = `${ip} ${prefix}`;
  let known = PREFIX_MEMO.get(key);
  if (known === undefined) {
    if (PREFIX_MEMO.size >= PREFIX_MEMO_MAX) PREFIX_MEMO.clear();
    PREFIX_MEMO.set(key, (known = computeInPrefix(ip, prefix)));
  }
  return known;
}
const PREFIX_MEMO = new Map<string, boolean>();
const PREFIX_MEMO_MAX = 100_000;

function computeInPrefix(ip: string, prefix: string): boolean {
  const v6 = ip.includes(":");
  if (v6 !== prefix.includes(":")) return false;
  if (!v6)
    return (
      Address4.isValid(ip) && Address4.isValid(prefix) && new Address4(ip).isInSubnet(new Address4(prefix))
    );
  return (
    Address6.isValid(ip) && Address6.isValid(prefix) && new Address6(ip).isInSubnet(new Address6(prefix))
  );
}
