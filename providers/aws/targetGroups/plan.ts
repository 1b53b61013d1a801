// The target groups' part of a plan, pure: each desired group made with its targets, or its health check,
// attributes and targets brought to what is desired; groups no longer wanted are deleted only after the listeners
// have moved off them (make-before-break).
import { listed, type Describers, type ResourcePlan } from "../resourcePlan.ts";
import type { DesiredTargetGroup, HealthCheck, ObservedTargetGroup, Target } from "../model.ts";
import { DEFAULT_TG_ATTRIBUTES } from "./desired.ts";
import type { TargetGroupOperation } from "./operations.ts";

export function planTargetGroups(
  desired: DesiredTargetGroup[],
  observed: ObservedTargetGroup[],
): ResourcePlan<TargetGroupOperation> {
  const byName = new Map(observed.map((tg) => [tg.name, tg]));
  const wanted = new Set(desired.map((tg) => tg.name));
  return {
    make: desired.flatMap((tg) => targetGroupOps(tg, byName.get(tg.name))),
    break: observed
      .filter((tg) => !wanted.has(tg.name))
      .map((tg) => ({ kind: "deleteTargetGroup", targetGroupArn: tg.arn, name: tg.name })),
  };
}

/** A Service removed: its target groups, once its load balancers (which use them) are gone. */
export function planTargetGroupDeletion(observed: ObservedTargetGroup[]): TargetGroupOperation[] {
  return observed.map((tg) => ({ kind: "deleteTargetGroup", targetGroupArn: tg.arn, name: tg.name }));
}

function targetGroupOps(
  desired: DesiredTargetGroup,
  observed: ObservedTargetGroup | undefined,
): TargetGroupOperation[] {
  if (!observed) {
    const ops: TargetGroupOperation[] = [{ kind: "createTargetGroup", targetGroup: desired }];
    if (desired.targets.length)
      ops.push({ kind: "registerTargets", targetGroupName: desired.name, targets: desired.targets });
    return ops;
  }
  const ops: TargetGroupOperation[] = [];
  const named = { targetGroupArn: observed.arn, name: observed.name };
  if (!sameHealthCheck(desired.healthCheck, observed.healthCheck))
    ops.push({ kind: "modifyHealthCheck", ...named, healthCheck: desired.healthCheck });
  // An attribute not reported has its default value.
  const now: Record<string, string> = { ...DEFAULT_TG_ATTRIBUTES, ...observed.attributes };
  const attributes = Object.fromEntries(Object.entries(desired.attributes).filter(([k, v]) => now[k] !== v));
  if (Object.keys(attributes).length) ops.push({ kind: "modifyTargetGroupAttributes", ...named, attributes });
  const have = new Set(observed.targets.map(targetKey));
  const want = new Set(desired.targets.map(targetKey));
  const add = desired.targets.filter((t) => !have.has(targetKey(t)));
  const remove = observed.targets.filter((t) => !want.has(targetKey(t)));
  if (add.length) ops.push({ kind: "registerTargets", targetGroupName: desired.name, targets: add });
  if (remove.length) ops.push({ kind: "deregisterTargets", ...named, targets: remove });
  return ops;
}

function sameHealthCheck(a: HealthCheck, b: HealthCheck): boolean {
  const http = a.protocol !== "TCP";
  return (
    a.protocol === b.protocol &&
    a.port === b.port &&
    a.intervalSeconds === b.intervalSeconds &&
    a.timeoutSeconds === b.timeoutSeconds &&
    a.healthyThreshold === b.healthyThreshold &&
    a.unhealthyThreshold === b.unhealthyThreshold &&
    (!http || (a.path === b.path && a.matcher === b.matcher))
  );
}

const targetKey = (t: Target) => `${t.id}:${t.port}`;

export const targetGroupDescriptions: Describers<TargetGroupOperation> = {
  createTargetGroup: ({ targetGroup: tg }) =>
    `create ${tg.targetType} target group ${tg.name} (${tg.protocol}:${tg.port}, health ${tg.healthCheck.protocol}:${tg.healthCheck.port}${tg.healthCheck.path ?? ""})`,
  modifyHealthCheck: (op) =>
    `change health check of ${op.name} to ${op.healthCheck.protocol}:${op.healthCheck.port}${op.healthCheck.path ?? ""}`,
  modifyTargetGroupAttributes: (op) => `set attributes of ${op.name}: ${listed(op.attributes)}`,
  registerTargets: (op) => `register ${op.targets.map(targetKey).join(", ")} in ${op.targetGroupName}`,
  deregisterTargets: (op) => `deregister (drain) ${op.targets.map(targetKey).join(", ")} from ${op.name}`,
  deleteTargetGroup: (op) => `delete target group ${op.name}`,
};
