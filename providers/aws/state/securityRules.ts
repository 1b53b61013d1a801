// The security rules an AWS Service's last pass left in place — the ingress of the NLB's own security group and
// the backend rules Portico added for it to its targets' groups — and how a read of the cluster's groups and rules
// (clusterGroups.ts, the one read every Service shares) differs from them, for the security-rule check
// (../../securityRuleRecords.ts). The passes alone would not see a rule revoked by hand for up to an hour: a
// settled Service's passes read its targets alone and trust its kept observation, security groups included, until
// the next full observation. What the check finds different sends the Service to a full pass, which restores it.
import type { RuleDifference } from "../../securityRuleRecords.ts";
import type {
  BackendRule,
  DesiredLoadBalancer,
  IngressRule,
  ObservedBackendRule,
  ObservedSecurityGroup,
} from "../model.ts";
import { ruleKey as backendRuleKey } from "../securityGroups/backendRules.ts";

export { backendRuleKey };

/** The security rules a Service's pass left in place. */
export interface HeldRules {
  /** The NLB's own group (absent when the user brings groups or none). */
  group?: { name: string; ingress: IngressRule[] };
  /** Rules on the targets' groups for an NLB without security groups. */
  backendRules: BackendRule[];
}

export function heldBy(desired: DesiredLoadBalancer): HeldRules {
  const own = desired.securityGroup;
  return {
    ...(own ? { group: { name: own.name, ingress: own.ingress } } : {}),
    backendRules: desired.backendRules,
  };
}

/**
 * How the rules found differ from those held, one line each. The NLB's group is compared rule by rule, both ways
 * (a rule added to Portico's own group opens the NLB to more than the Service asks). A held backend rule is in
 * place when any Service's equal rule is (`anyService`, by backendRules.ts's key: Portico made it once, for
 * either); one found tagged as the Service's but not held was added by someone else. A group the read does not
 * hold (its tags removed by hand) is not judged here: a full observation finds it as the passes do.
 */
export function ruleDifferences(
  held: HeldRules,
  groups: readonly ObservedSecurityGroup[],
  backendRules: readonly ObservedBackendRule[],
  anyService: ReadonlySet<string>,
): RuleDifference[] {
  const out: RuleDifference[] = [];
  const mended = (text: string) => out.push({ text, mendable: true });
  const group = held.group && groups.find((g) => g.name === held.group!.name);
  if (held.group && group) {
    const key = (r: IngressRule) => `${r.protocol}/${r.port} from ${r.cidr}`;
    const found = new Set(group.ingress.map(key));
    const wanted = new Set(held.group.ingress.map(key));
    for (const r of held.group.ingress)
      if (!found.has(key(r))) mended(`ingress ${key(r)} is gone from the NLB's security group ${group.id}`);
    for (const r of group.ingress)
      if (!wanted.has(key(r))) mended(`ingress ${key(r)} was added to the NLB's security group ${group.id}`);
  }
  const wanted = new Set(held.backendRules.map(backendRuleKey));
  const describe = (r: BackendRule) => `backend rule ${r.protocol}/${r.port} from ${r.source}`;
  // Put back, an equal rule someone else made answers "duplicate" and is left alone: this one may not be mended.
  for (const r of held.backendRules)
    if (!anyService.has(backendRuleKey(r)))
      out.push({ text: `${describe(r)} is gone from ${r.groupId}`, mendable: false });
  // Portico's own rule, revoked by its ID: always done.
  for (const r of backendRules)
    if (!wanted.has(backendRuleKey(r))) mended(`${describe(r)} was added to ${r.groupId}`);
  return out;
}
