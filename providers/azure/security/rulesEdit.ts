// Edits of the cluster's network security group. Pure, like the load balancer edits: one Service's allow rules
// put in place or taken out, priorities chosen from what the group holds right now, nothing else touched. A rule
// is Portico's only when it carries both the Service's name prefix and Portico's mark in its description; any
// other rule (the user's, AKS's) is never changed, and its priority is never taken.
import { ConfigurationError } from "../../errors.ts";
import type { DesiredSecurityRule, NetworkSecurityGroup } from "../model.ts";
import { belongsTo } from "../names.ts";

type SecurityRule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];

/** cloud-provider-azure starts its rules at 500 too, leaving 100-499 to the cluster's own. */
export const PRIORITY_RANGE = { min: 500, max: 4096 } as const;
const MARK = "portico:";

export interface ResolvedRules {
  frontend: string;
  description: string;
  rules: DesiredSecurityRule[];
  /** The frontend's address, for rules whose destination is the frontend (floating IP). */
  frontendAddress?: string;
}

export function isPorticoRule(rule: SecurityRule, frontend: string): boolean {
  return belongsTo(rule.name, frontend) && (rule.description?.startsWith(MARK) ?? false);
}

/** The group with exactly the Service's desired rules among its own. */
export function withServiceRules(nsg: NetworkSecurityGroup, want: ResolvedRules): NetworkSecurityGroup {
  const existing = nsg.securityRules ?? [];
  const mine = existing.filter((r) => isPorticoRule(r, want.frontend));
  const others = existing.filter((r) => !isPorticoRule(r, want.frontend));
  const bodies = want.rules.flatMap((r) => {
    const body = ruleBody(r, want);
    return body ? [body] : [];
  });
  for (const body of bodies) {
    if (others.some((o) => o.name?.toLowerCase() === body.name!.toLowerCase()))
      throw new ConfigurationError(
        "SecurityRuleNameTaken",
        "metadata.uid",
        `the network security group has a rule named ${body.name} that Portico did not make`,
        "remove or rename that rule; Portico never changes rules it did not create",
      );
  }
  const taken = new Set(others.filter((r) => r.direction === "Inbound").map((r) => r.priority));
  const placed: SecurityRule[] = [];
  for (const body of bodies) {
    const before = mine.find((m) => m.name?.toLowerCase() === body.name!.toLowerCase());
    const kept =
      before?.priority !== undefined && !taken.has(before.priority) && before.access === body.access;
    // Deny rules take priorities from the top down (4095 first, as cloud-provider-azure), below every allow rule.
    const priority = kept ? before.priority! : freePriority(taken, body.access === "Deny");
    taken.add(priority);
    placed.push({ ...body, priority });
  }
  const next = { ...nsg, securityRules: [...others, ...placed] };
  return canonicalRules(mine) === canonicalRules(placed) ? nsg : next;
}

/** The group without the Service's rules (itself when it has none). */
export function withoutServiceRules(nsg: NetworkSecurityGroup, frontend: string): NetworkSecurityGroup {
  const rules = nsg.securityRules ?? [];
  const kept = rules.filter((r) => !isPorticoRule(r, frontend));
  return kept.length === rules.length ? nsg : { ...nsg, securityRules: kept };
}

function ruleBody(r: DesiredSecurityRule, want: ResolvedRules): SecurityRule | undefined {
  let destinations: string[];
  if (r.destination === "frontend") {
    // The frontend's address is known once it exists; until then its rule waits for the next pass.
    if (!want.frontendAddress) return undefined;
    destinations = [want.frontendAddress];
  } else destinations = [...r.destination].sort();
  const sources = [...r.sources].sort();
  return {
    name: r.name,
    description: want.description,
    protocol: r.protocol,
    access: r.access,
    direction: "Inbound",
    sourcePortRange: "*",
    destinationPortRange: String(r.destinationPort),
    ...(sources.length === 1 ? { sourceAddressPrefix: sources[0] } : { sourceAddressPrefixes: sources }),
    ...(destinations.length === 1
      ? { destinationAddressPrefix: destinations[0] }
      : { destinationAddressPrefixes: destinations }),
  };
}

function freePriority(taken: Set<number | undefined>, fromTop: boolean): number {
  if (fromTop) {
    for (let p = PRIORITY_RANGE.max - 1; p >= PRIORITY_RANGE.min; p--) if (!taken.has(p)) return p;
  } else for (let p = PRIORITY_RANGE.min; p <= PRIORITY_RANGE.max; p++) if (!taken.has(p)) return p;
  throw new ConfigurationError(
    "SecurityGroupFull",
    "spec.ports",
    `the network security group has no free priority between ${PRIORITY_RANGE.min} and ${PRIORITY_RANGE.max}`,
    "remove unused rules from the network security group",
  );
}

/** The rules as compared: what decides traffic, in a fixed order (the name's case and order aside). */
export function canonicalRules(rules: SecurityRule[]): string {
  const prefixes = (one: string | undefined, many: string[] | undefined) =>
    [...(many?.length ? many : one ? [one] : [])].sort();
  return JSON.stringify(
    [...rules]
      .sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""))
      .map((r) => [
        r.name?.toLowerCase(),
        r.description,
        r.protocol,
        r.access,
        r.direction,
        r.priority,
        r.destinationPortRange,
        prefixes(r.sourceAddressPrefix, r.sourceAddressPrefixes),
        prefixes(r.destinationAddressPrefix, r.destinationAddressPrefixes),
      ]),
  );
}
