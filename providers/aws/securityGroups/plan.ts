// The security groups' part of a plan, pure: the Service's own group made or its rules brought to what is desired,
// and the backend rules of an NLB without groups added before the load balancer needs them; what is no longer
// wanted is revoked or deleted only after everything else is in place (make-before-break).
import type { Describers, ResourcePlan } from "../resourcePlan.ts";
import type { DesiredLoadBalancer, IngressRule, Observed, ObservedBackendRule } from "../model.ts";
import { planBackendRules, ruleKey as backendRuleKey } from "./backendRules.ts";
import type { SecurityGroupOperation } from "./operations.ts";

export function planSecurityGroups(
  desired: DesiredLoadBalancer,
  observed: Observed,
): ResourcePlan<SecurityGroupOperation> & { ownGroupId: string | undefined } {
  const make: SecurityGroupOperation[] = [];
  const own = desired.securityGroup;
  const group = own && observed.securityGroups.find((g) => g.name === own.name);
  if (own && !group) make.push({ kind: "createSecurityGroup", group: own });
  else if (own && group) {
    const have = new Set(group.ingress.map(ruleKey));
    const want = new Set(own.ingress.map(ruleKey));
    const add = own.ingress.filter((r) => !have.has(ruleKey(r)));
    const remove = group.ingress.filter((r) => !want.has(ruleKey(r)));
    if (add.length) make.push({ kind: "authorizeIngress", groupId: group.id, rules: add });
    if (remove.length) make.push({ kind: "revokeIngress", groupId: group.id, rules: remove });
  }
  const backend = planBackendRules(desired.backendRules, observed.backendRules);
  for (const [groupId, rules] of backend.authorize)
    make.push({ kind: "authorizeBackendRules", groupId, rules });
  // Portico's own rules go before any group they name can be deleted.
  const drop: SecurityGroupOperation[] = [];
  for (const [groupId, rules] of backend.revoke) drop.push({ kind: "revokeBackendRules", groupId, rules });
  for (const g of observed.securityGroups)
    if (g.name !== own?.name) drop.push({ kind: "deleteSecurityGroup", groupId: g.id, name: g.name });
  return { make, break: drop, ownGroupId: group?.id };
}

/** A Service removed: its backend rules revoked, then its groups deleted. */
export function planSecurityGroupDeletion(observed: Observed): SecurityGroupOperation[] {
  const byGroup = new Map<string, ObservedBackendRule[]>();
  for (const r of observed.backendRules) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
  return [
    ...[...byGroup].map(([groupId, rules]): SecurityGroupOperation => ({
      kind: "revokeBackendRules",
      groupId,
      rules,
    })),
    ...observed.securityGroups.map((g): SecurityGroupOperation => ({
      kind: "deleteSecurityGroup",
      groupId: g.id,
      name: g.name,
    })),
  ];
}

const ruleKey = (r: IngressRule) => `${r.protocol}/${r.port}/${r.cidr}`;

export const securityGroupDescriptions: Describers<SecurityGroupOperation> = {
  createSecurityGroup: (op) =>
    `create security group ${op.group.name} (${op.group.ingress.length} ingress rules)`,
  authorizeIngress: (op) => `allow ${op.rules.map(ruleKey).join(", ")} in ${op.groupId}`,
  revokeIngress: (op) => `revoke ${op.rules.map(ruleKey).join(", ")} in ${op.groupId}`,
  authorizeBackendRules: (op) => `allow ${op.rules.map(backendRuleKey).join(", ")} (backend rules)`,
  revokeBackendRules: (op) => `revoke ${op.rules.map(backendRuleKey).join(", ")} (backend rules)`,
  deleteSecurityGroup: (op) => `delete security group ${op.name}`,
  useSharedBackend: (op) => op.changes,
};
