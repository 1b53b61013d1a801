// How the cluster's network security group, as read now, differs from the rules a Service's last pass put in it,
// for the security-rule check (../../securityRuleRecords.ts): one GET of the group a minute for the whole cluster,
// rather than each Service's rules waiting for its periodic resync, which left a rule deleted by hand out for up
// to ten minutes. The comparison is the edit itself (rulesEdit.ts): the rules differ exactly when the Service's
// pass would write them. Pure.
import type { RuleDifference } from "../../securityRuleRecords.ts";
import { ConfigurationError } from "../../errors.ts";
import type { NetworkSecurityGroup } from "../model.ts";
import { canonicalRules, isPorticoRule, withServiceRules, type ResolvedRules } from "./rulesEdit.ts";

type SecurityRule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];

/** One line per rule of the Service's found deleted, changed or added; none when its pass would change nothing. */
export function ruleDifferences(nsg: NetworkSecurityGroup, want: ResolvedRules): RuleDifference[] {
  const where = `network security group ${nsg.name ?? ""}`;
  let edited: NetworkSecurityGroup;
  try {
    edited = withServiceRules(nsg, want);
  } catch (err) {
    // A rule of the Service's name that is no longer marked as Portico's: its pass refuses it, naming the fix.
    if (err instanceof ConfigurationError) return [{ text: `${where}: ${err.message}`, mendable: true }];
    throw err;
  }
  if (edited === nsg) return [];
  const mine = (g: NetworkSecurityGroup) =>
    new Map(
      (g.securityRules ?? [])
        .filter((r) => isPorticoRule(r, want.frontend))
        .map((r): [string, SecurityRule] => [r.name!.toLowerCase(), r]),
    );
  const found = mine(nsg);
  const wanted = mine(edited);
  const out: RuleDifference[] = [];
  for (const [key, r] of wanted) {
    const was = found.get(key);
    if (!was) out.push({ text: `security rule ${r.name} is gone from ${where}`, mendable: true });
    else if (canonicalRules([was]) !== canonicalRules([r]))
      out.push({ text: `security rule ${r.name} was changed in ${where}`, mendable: true });
  }
  for (const [key, r] of found)
    if (!wanted.has(key)) out.push({ text: `security rule ${r.name} was added to ${where}`, mendable: true });
  return out;
}
