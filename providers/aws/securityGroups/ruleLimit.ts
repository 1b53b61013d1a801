// EC2 holds at most so many inbound rules in a security group ("Inbound or outbound rules per security group", 60
// by default, counted apart for IPv4 and IPv6), and refuses the AuthorizeSecurityGroupIngress that would pass it:
// the group is then left with the rules that fitted, the NLB half-open. How many rules Portico writes is known from
// the Service before any call (what its managed prefix lists weigh, from the pass's reads, before any write), so a
// Service that needs more is refused before anything is made, naming the field that brings the rules, the count
// and the limit (--aws-rules-per-security-group, for accounts with a raised quota). Pure.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { AWS_ANNOTATION_KEYS as K } from "../annotations/catalog.ts";
import type { BackendRule, IngressRule } from "../model.ts";

/** EC2's default quota of inbound rules per security group and address family. */
export const DEFAULT_RULES_PER_SECURITY_GROUP = 60;
/** EC2 lets the quota be raised until it times the groups a network interface may have (5 and up) reaches 1000. */
export const MAX_RULES_PER_SECURITY_GROUP = 1000;

const FLAG = "--aws-rules-per-security-group";

type Family = "IPv4" | "IPv6";
const familyOf = (cidr: string): Family => (cidr.includes(":") ? "IPv6" : "IPv4");

/** Where the rules come from: the source ranges when the Service gives any, otherwise its ports. */
function fieldOf(intent: LoadBalancerIntent): string {
  return intent.sourceRanges.length
    ? (intent.sourceRangesField ?? "spec.loadBalancerSourceRanges")
    : "spec.ports";
}

/** What EC2 counts a rule referencing a managed prefix list as: its maximum entries, in its family. */
export interface PrefixListWeight {
  family: Family;
  maxEntries: number;
}

/** The family whose count passes the limit, with the count; undefined when both fit. */
function over(
  sources: readonly { family: Family; weight: number }[],
  limit: number,
): { family: Family; count: number } | undefined {
  for (const family of ["IPv4", "IPv6"] as const) {
    const count = sources.filter((c) => c.family === family).reduce((n, c) => n + c.weight, 0);
    if (count > limit) return { family, count };
  }
  return undefined;
}

const cidrs = (sources: readonly string[]) => sources.map((c) => ({ family: familyOf(c), weight: 1 }));

/**
 * The NLB's own group: one rule per source range (or everyone) and managed prefix list, per listener port and
 * protocol (two for a TCP_UDP listener). A prefix-list rule counts as the list's maximum entries (`prefixLists`,
 * read with the pass's other reads); until they are read it is left out, and counted once they are.
 */
export function checkOwnGroupRules(
  intent: LoadBalancerIntent,
  rules: readonly IngressRule[],
  limit: number,
  prefixLists?: ReadonlyMap<string, PrefixListWeight>,
): void {
  const lists = prefixLists ? rules.filter((r) => r.cidr.startsWith("pl-")) : [];
  const weighed = [
    ...cidrs(rules.filter((r) => !r.cidr.startsWith("pl-")).map((r) => r.cidr)),
    ...lists.map((r) => ({
      family: prefixLists!.get(r.cidr)?.family ?? ("IPv4" as const),
      weight: prefixLists!.get(r.cidr)?.maxEntries ?? 1,
    })),
  ];
  const found = over(weighed, limit);
  if (!found) return;
  const listeners = new Set(rules.map((r) => `${r.protocol}/${r.port}`)).size;
  const perListener = found.count / listeners;
  const what = lists.length
    ? `${perListener} a listener, prefix lists counted at their maximum entries,`
    : `${perListener} ${perListener === 1 ? "source" : "sources"}`;
  throw new ConfigurationError(
    "TooManySecurityGroupRules",
    lists.length && !intent.sourceRanges.length ? `metadata.annotations[${K.prefixLists}]` : fieldOf(intent),
    `the NLB's security group would need ${found.count} inbound ${found.family} rules (${what} × ${listeners} listener ${listeners === 1 ? "port" : "ports and protocols"}), and a security group holds ${limit} per address family (${FLAG})`,
    `give at most ${Math.floor(limit / listeners)} ${found.family} ${lists.length ? "rules' worth of ranges and prefix-list entries" : "ranges"} for ${listeners === 1 ? "this port" : "these ports"} (merge neighbouring ranges into wider CIDRs), split the ports over several Services, or bring your own security groups (${K.securityGroups}); with a raised quota for the account, set ${FLAG} to it`,
  );
}

/**
 * Without a group of its own on the NLB (disable-nlb-sg) the rules name addresses on the targets' own groups: the
 * rules this Service alone adds to one of them must fit, whatever else the group holds.
 */
export function checkBackendGroupRules(
  intent: LoadBalancerIntent,
  rules: readonly BackendRule[],
  limit: number,
): void {
  const byGroup = new Map<string, string[]>();
  for (const r of rules) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r.source]);
  for (const [groupId, sources] of byGroup) {
    const found = over(cidrs(sources), limit);
    if (!found) continue;
    throw new ConfigurationError(
      "TooManySecurityGroupRules",
      fieldOf(intent),
      `without a security group on the NLB (${K.disableNlbSg}), the targets' security group ${groupId} would need ${found.count} inbound ${found.family} rules for this Service alone, and a security group holds ${limit} per address family (${FLAG})`,
      `give fewer or wider ranges, or let the NLB have its security group (remove ${K.disableNlbSg}); with a raised quota for the account, set ${FLAG} to it`,
    );
  }
}
