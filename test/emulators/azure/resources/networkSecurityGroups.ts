// Microsoft.Network/networkSecurityGroups and their securityRules. Rules are checked for NRP's documented limits
// (priority 100-4096, unique priority per direction, one of prefix/prefixes, rules and addresses per group); the
// group renders Azure's default rules, and cannot be deleted while a subnet uses it.
import type { BodyObject, Json } from "../body.ts";
import { assertValidName, childId, idKey, sameId } from "../ids.ts";
import type { Context, ResourceKind } from "../kinds.ts";
import { compact, renderChild, renderEnvelope } from "../kinds.ts";
import { ipToBigInt, parsePrefix } from "../ipam.ts";
import { limitFor } from "../limits.ts";
import type { NetworkSecurityGroup, SecurityRule } from "../model.ts";
import {
  duplicateChildName,
  inUseNsgCannotBeDeleted,
  missingRequiredProperty,
  securityRuleAddressesLimitReached,
  securityRuleCountLimitReached,
  securityRuleInvalidAddressPrefixes,
  securityRuleInvalidPriority,
  securityRulesConflict,
} from "../networkErrors.ts";
import { subnetsUsingNsg } from "../references.ts";

export function parseSecurityRule(b: BodyObject, name?: string): SecurityRule {
  const ruleName = name ?? b.string("name");
  if (!ruleName) throw missingRequiredProperty("name", b.path || "the request body");
  assertValidName(ruleName);
  const p = b.properties();
  const protocol = p.enumValue("protocol", ["Tcp", "Udp", "Icmp", "Esp", "Ah", "*"], "SecurityRuleProtocol");
  const access = p.enumValue("access", ["Allow", "Deny"], "SecurityRuleAccess");
  const direction = p.enumValue("direction", ["Inbound", "Outbound"], "SecurityRuleDirection");
  const priority = p.integer("priority");
  const id = `securityRules/${ruleName}`;
  if (!protocol) throw missingRequiredProperty("protocol", id);
  if (!access) throw missingRequiredProperty("access", id);
  if (!direction) throw missingRequiredProperty("direction", id);
  if (priority === undefined) throw missingRequiredProperty("priority", id);
  return compact({
    name: ruleName,
    description: p.string("description"),
    protocol,
    sourcePortRange: p.string("sourcePortRange"),
    sourcePortRanges: p.strings("sourcePortRanges") ?? [],
    destinationPortRange: p.string("destinationPortRange"),
    destinationPortRanges: p.strings("destinationPortRanges") ?? [],
    sourceAddressPrefix: p.string("sourceAddressPrefix"),
    sourceAddressPrefixes: p.strings("sourceAddressPrefixes") ?? [],
    destinationAddressPrefix: p.string("destinationAddressPrefix"),
    destinationAddressPrefixes: p.strings("destinationAddressPrefixes") ?? [],
    access,
    priority,
    direction,
  }) as unknown as SecurityRule;
}

/** IP addresses and ranges count towards the limit; service tags and `*` do not. */
const isAddress = (text: string): boolean =>
  ipToBigInt(text) !== undefined || parsePrefix(text) !== undefined;

function admitLimits(nsg: NetworkSecurityGroup, ctx: Context): void {
  const rules = nsg.properties.securityRules;
  const maxRules = limitFor(ctx.config.limits, "securityRulesPerGroup");
  if (maxRules !== undefined && rules.length > maxRules) throw securityRuleCountLimitReached(maxRules);
  const maxAddresses = limitFor(ctx.config.limits, "addressPrefixesPerSecurityGroup");
  if (maxAddresses === undefined) return;
  const sides = [
    ["SourceAddressPrefixes", (r: SecurityRule) => [r.sourceAddressPrefix ?? "", ...r.sourceAddressPrefixes]],
    [
      "DestinationAddressPrefixes",
      (r: SecurityRule) => [r.destinationAddressPrefix ?? "", ...r.destinationAddressPrefixes],
    ],
  ] as const;
  for (const [property, prefixes] of sides) {
    const count = rules.reduce((n, r) => n + prefixes(r).filter(isAddress).length, 0);
    if (count > maxAddresses) throw securityRuleAddressesLimitReached(nsg.id, property, count, maxAddresses);
  }
}

function admit(nsg: NetworkSecurityGroup, ctx: Context): void {
  const rules = nsg.properties.securityRules;
  // The rules before each one, by name and by priority and direction (the first of each): looking back through
  // them for every rule made a write of a group of 1000 rules cost a million comparisons.
  const names = new Set<string>();
  const byPriority = new Map<string, SecurityRule>();
  rules.forEach((rule) => {
    const id = childId(nsg.id, "securityRules", rule.name);
    if (names.has(idKey(rule.name))) throw duplicateChildName(nsg.id, "securityRules", rule.name);
    names.add(idKey(rule.name));
    if (rule.priority < 100 || rule.priority > 4096) throw securityRuleInvalidPriority(id, rule.priority);
    const pairs: [string, string | undefined, string[]][] = [
      ["sourcePortRange", rule.sourcePortRange, rule.sourcePortRanges],
      ["destinationPortRange", rule.destinationPortRange, rule.destinationPortRanges],
      ["sourceAddressPrefix", rule.sourceAddressPrefix, rule.sourceAddressPrefixes],
      ["destinationAddressPrefix", rule.destinationAddressPrefix, rule.destinationAddressPrefixes],
    ];
    for (const [property, one, many] of pairs)
      if ((one === undefined) === (many.length === 0)) throw securityRuleInvalidAddressPrefixes(id, property);
    const slot = `${rule.priority} ${rule.direction}`;
    const twin = byPriority.get(slot);
    if (!twin) byPriority.set(slot, rule);
    if (twin)
      throw securityRulesConflict(
        childId(nsg.id, "securityRules", twin.name),
        id,
        rule.priority,
        rule.direction,
      );
  });
  admitLimits(nsg, ctx);
}

function renderRule(nsg: NetworkSecurityGroup, segment: string, r: SecurityRule): Json {
  return renderChild(
    nsg,
    segment,
    r.name,
    compact({
      description: r.description,
      protocol: r.protocol,
      sourcePortRange: r.sourcePortRange,
      sourcePortRanges: r.sourcePortRanges,
      destinationPortRange: r.destinationPortRange,
      destinationPortRanges: r.destinationPortRanges,
      sourceAddressPrefix: r.sourceAddressPrefix,
      sourceAddressPrefixes: r.sourceAddressPrefixes,
      destinationAddressPrefix: r.destinationAddressPrefix,
      destinationAddressPrefixes: r.destinationAddressPrefixes,
      access: r.access,
      priority: r.priority,
      direction: r.direction,
    }),
  );
}

/** The rules every Azure NSG carries below the user's, as documented. */
const DEFAULT_RULES: SecurityRule[] = [
  ["AllowVnetInBound", "VirtualNetwork", "VirtualNetwork", "Allow", 65000, "Inbound"],
  ["AllowAzureLoadBalancerInBound", "AzureLoadBalancer", "*", "Allow", 65001, "Inbound"],
  ["DenyAllInBound", "*", "*", "Deny", 65500, "Inbound"],
  ["AllowVnetOutBound", "VirtualNetwork", "VirtualNetwork", "Allow", 65000, "Outbound"],
  ["AllowInternetOutBound", "*", "Internet", "Allow", 65001, "Outbound"],
  ["DenyAllOutBound", "*", "*", "Deny", 65500, "Outbound"],
].map(([name, src, dst, access, priority, direction]) => ({
  name: name as string,
  protocol: "*",
  sourcePortRange: "*",
  sourcePortRanges: [],
  destinationPortRange: "*",
  destinationPortRanges: [],
  sourceAddressPrefix: src as string,
  sourceAddressPrefixes: [],
  destinationAddressPrefix: dst as string,
  destinationAddressPrefixes: [],
  access: access as "Allow" | "Deny",
  priority: priority as number,
  direction: direction as "Inbound" | "Outbound",
}));

function render(nsg: NetworkSecurityGroup, ctx: Context): Json {
  const subnets = subnetsUsingNsg(ctx.store, nsg.id).map((id) => ({ id }));
  return renderEnvelope(
    nsg,
    compact({
      securityRules: nsg.properties.securityRules.map((r) => renderRule(nsg, "securityRules", r)),
      defaultSecurityRules: DEFAULT_RULES.map((r) => renderRule(nsg, "defaultSecurityRules", r)),
      subnets: subnets.length ? subnets : undefined,
    }),
  );
}

export const networkSecurityGroups: ResourceKind<NetworkSecurityGroup> = {
  type: "networkSecurityGroups",
  operationNoun: "NetworkSecurityGroup",
  parse: (body) => ({
    properties: {
      securityRules: (body.properties().array("securityRules") ?? []).map((r) => parseSecurityRule(r)),
    },
  }),
  admit: (candidate, _existing, ctx) => admit(candidate, ctx),
  render,
  checkDelete(nsg, ctx) {
    const users = subnetsUsingNsg(ctx.store, nsg.id);
    if (users.length) throw inUseNsgCannotBeDeleted(nsg.id, users);
  },
  children: {
    securityrules: {
      segment: "securityRules",
      upsert(parent, name, body) {
        const rule = parseSecurityRule(body, name);
        const current = parent.properties.securityRules;
        const exists = current.some((r) => sameId(r.name, name));
        return {
          securityRules: exists ? current.map((r) => (sameId(r.name, name) ? rule : r)) : [...current, rule],
        };
      },
      remove: (parent, name) => ({
        securityRules: parent.properties.securityRules.filter((r) => !sameId(r.name, name)),
      }),
    },
    defaultsecurityrules: { segment: "defaultSecurityRules" },
  },
};
