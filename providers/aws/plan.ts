// The plan: the smallest list of ELBv2/EC2 operations that turns what is observed into what is desired.
// Pure: the same inputs always give the same plan, so it is unit-tested exhaustively and shown by
// `porticoctl plan` without touching the cloud. Operations are ordered make-before-break.
import type {
  DesiredListener,
  DesiredLoadBalancer,
  DesiredSecurityGroup,
  DesiredTargetGroup,
  HealthCheck,
  IngressRule,
  Observed,
  ObservedListener,
  ObservedLoadBalancer,
  ObservedTargetGroup,
  Target,
} from "./model.ts";

export type Operation =
  | { kind: "createSecurityGroup"; group: DesiredSecurityGroup }
  | { kind: "authorizeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "revokeIngress"; groupId: string; rules: IngressRule[] }
  | { kind: "createLoadBalancer"; loadBalancer: DesiredLoadBalancer }
  // Operations without an ARN act on the Service's desired load balancer, which may not exist yet at planning.
  | { kind: "setSubnets"; subnets: string[] }
  | { kind: "setSecurityGroups" }
  | { kind: "modifyLoadBalancerAttributes"; attributes: Record<string, string> }
  | { kind: "createTargetGroup"; targetGroup: DesiredTargetGroup }
  | { kind: "modifyHealthCheck"; targetGroupArn: string; name: string; healthCheck: HealthCheck }
  | {
      kind: "modifyTargetGroupAttributes";
      targetGroupArn: string;
      name: string;
      attributes: Record<string, string>;
    }
  | { kind: "registerTargets"; targetGroupName: string; targets: Target[] }
  | { kind: "deregisterTargets"; targetGroupArn: string; name: string; targets: Target[] }
  | { kind: "createListener"; listener: DesiredListener }
  | { kind: "modifyListener"; listenerArn: string; listener: DesiredListener }
  | { kind: "deleteListener"; listenerArn: string; port: number }
  | { kind: "deleteTargetGroup"; targetGroupArn: string; name: string }
  | { kind: "deleteLoadBalancer"; loadBalancerArn: string; name: string; reason: string }
  | { kind: "deleteSecurityGroup"; groupId: string; name: string };

export interface Plan {
  operations: Operation[];
  /** The load balancer that serves the Service once the plan is applied (absent until it is created). */
  current?: ObservedLoadBalancer;
  /** Load balancers of this Service that are replaced by the desired one. */
  replaced: ObservedLoadBalancer[];
}

export function plan(desired: DesiredLoadBalancer, observed: Observed): Plan {
  const ops: Operation[] = [];
  const current = observed.loadBalancers.find((lb) => lb.name === desired.name);
  const replaced = observed.loadBalancers.filter((lb) => lb !== current);

  const group = observed.securityGroups.find((g) => g.name === desired.securityGroup.name);
  if (!group) ops.push({ kind: "createSecurityGroup", group: desired.securityGroup });
  else {
    const { add, remove } = diff(desired.securityGroup.ingress, group.ingress, ruleKey);
    if (add.length) ops.push({ kind: "authorizeIngress", groupId: group.id, rules: add });
    if (remove.length) ops.push({ kind: "revokeIngress", groupId: group.id, rules: remove });
  }

  if (!current) ops.push({ kind: "createLoadBalancer", loadBalancer: desired });
  else {
    if (!sameSet(current.subnets, desired.subnets))
      ops.push({ kind: "setSubnets", subnets: desired.subnets });
    if (!group || !current.securityGroups.includes(group.id)) ops.push({ kind: "setSecurityGroups" });
  }
  const lbAttributes = changed(desired.attributes, current?.attributes ?? {});
  if (Object.keys(lbAttributes).length) {
    ops.push({ kind: "modifyLoadBalancerAttributes", attributes: lbAttributes });
  }

  const observedGroups = new Map(observed.targetGroups.map((tg) => [tg.name, tg]));
  for (const tg of desired.targetGroups) ops.push(...targetGroupOps(tg, observedGroups.get(tg.name)));

  const listenersByPort = new Map((current?.listeners ?? []).map((l) => [l.port, l]));
  for (const listener of desired.listeners) {
    const existing = listenersByPort.get(listener.port);
    const tg = observedGroups.get(listener.targetGroupName);
    if (!existing) ops.push({ kind: "createListener", listener });
    else if (!sameListener(existing, listener, tg))
      ops.push({ kind: "modifyListener", listenerArn: existing.arn, listener });
  }
  const wantedPorts = new Set(desired.listeners.map((l) => l.port));
  for (const l of current?.listeners ?? []) {
    if (!wantedPorts.has(l.port)) ops.push({ kind: "deleteListener", listenerArn: l.arn, port: l.port });
  }

  for (const lb of replaced) {
    ops.push({
      kind: "deleteLoadBalancer",
      loadBalancerArn: lb.arn,
      name: lb.name,
      reason: `replaced by ${desired.name}`,
    });
  }
  const wantedGroups = new Set(desired.targetGroups.map((tg) => tg.name));
  for (const tg of observed.targetGroups) {
    if (!wantedGroups.has(tg.name))
      ops.push({ kind: "deleteTargetGroup", targetGroupArn: tg.arn, name: tg.name });
  }
  for (const g of observed.securityGroups) {
    if (g.name !== desired.securityGroup.name)
      ops.push({ kind: "deleteSecurityGroup", groupId: g.id, name: g.name });
  }
  return { operations: ops, ...(current ? { current } : {}), replaced };
}

/** Everything that removes a Service: load balancers first (their listeners go with them), then what they used. */
export function planDeletion(observed: Observed): Operation[] {
  return [
    ...observed.loadBalancers.map((lb): Operation => ({
      kind: "deleteLoadBalancer",
      loadBalancerArn: lb.arn,
      name: lb.name,
      reason: "Service no longer needs it",
    })),
    ...observed.targetGroups.map((tg): Operation => ({
      kind: "deleteTargetGroup",
      targetGroupArn: tg.arn,
      name: tg.name,
    })),
    ...observed.securityGroups.map((g): Operation => ({
      kind: "deleteSecurityGroup",
      groupId: g.id,
      name: g.name,
    })),
  ];
}

function targetGroupOps(desired: DesiredTargetGroup, observed: ObservedTargetGroup | undefined): Operation[] {
  if (!observed) {
    const ops: Operation[] = [{ kind: "createTargetGroup", targetGroup: desired }];
    if (desired.targets.length)
      ops.push({ kind: "registerTargets", targetGroupName: desired.name, targets: desired.targets });
    return ops;
  }
  const ops: Operation[] = [];
  if (!sameHealthCheck(desired.healthCheck, observed.healthCheck)) {
    ops.push({
      kind: "modifyHealthCheck",
      targetGroupArn: observed.arn,
      name: observed.name,
      healthCheck: desired.healthCheck,
    });
  }
  const attributes = changed(desired.attributes, observed.attributes);
  if (Object.keys(attributes).length) {
    ops.push({
      kind: "modifyTargetGroupAttributes",
      targetGroupArn: observed.arn,
      name: observed.name,
      attributes,
    });
  }
  const { add, remove } = diff(desired.targets, observed.targets, targetKey);
  if (add.length) ops.push({ kind: "registerTargets", targetGroupName: desired.name, targets: add });
  if (remove.length)
    ops.push({
      kind: "deregisterTargets",
      targetGroupArn: observed.arn,
      name: observed.name,
      targets: remove,
    });
  return ops;
}

function sameListener(
  observed: ObservedListener,
  desired: DesiredListener,
  tg: ObservedTargetGroup | undefined,
): boolean {
  return (
    observed.protocol === desired.protocol &&
    tg !== undefined &&
    observed.targetGroupArn === tg.arn &&
    sameSet(observed.certificateArns, desired.certificateArns) &&
    (desired.sslPolicy === undefined || observed.sslPolicy === desired.sslPolicy)
  );
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

function changed(desired: Record<string, string>, observed: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(desired).filter(([k, v]) => observed[k] !== v));
}

function diff<T>(desired: T[], observed: T[], key: (t: T) => string) {
  const have = new Set(observed.map(key));
  const want = new Set(desired.map(key));
  return { add: desired.filter((d) => !have.has(key(d))), remove: observed.filter((o) => !want.has(key(o))) };
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

const ruleKey = (r: IngressRule) => `${r.protocol}/${r.port}/${r.cidr}`;
const targetKey = (t: Target) => `${t.id}:${t.port}`;

/** One line per operation, for Events, logs and `porticoctl plan`. */
export function describeOperation(op: Operation): string {
  switch (op.kind) {
    case "createSecurityGroup":
      return `create security group ${op.group.name} (${op.group.ingress.length} ingress rules)`;
    case "authorizeIngress":
      return `allow ${op.rules.map(ruleKey).join(", ")} in ${op.groupId}`;
    case "revokeIngress":
      return `revoke ${op.rules.map(ruleKey).join(", ")} in ${op.groupId}`;
    case "createLoadBalancer":
      return `create ${op.loadBalancer.scheme} NLB ${op.loadBalancer.name} in ${op.loadBalancer.subnets.join(", ")}`;
    case "setSubnets":
      return `set subnets to ${op.subnets.join(", ")}`;
    case "setSecurityGroups":
      return "attach the security group to the load balancer";
    case "modifyLoadBalancerAttributes":
      return `set load balancer attributes ${Object.entries(op.attributes)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`;
    case "createTargetGroup":
      return `create ${op.targetGroup.targetType} target group ${op.targetGroup.name} (${op.targetGroup.protocol}:${op.targetGroup.port}, health ${op.targetGroup.healthCheck.protocol}:${op.targetGroup.healthCheck.port}${op.targetGroup.healthCheck.path ?? ""})`;
    case "modifyHealthCheck":
      return `change health check of ${op.name} to ${op.healthCheck.protocol}:${op.healthCheck.port}${op.healthCheck.path ?? ""}`;
    case "modifyTargetGroupAttributes":
      return `set attributes of ${op.name}: ${Object.entries(op.attributes)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`;
    case "registerTargets":
      return `register ${op.targets.map(targetKey).join(", ")} in ${op.targetGroupName}`;
    case "deregisterTargets":
      return `deregister (drain) ${op.targets.map(targetKey).join(", ")} from ${op.name}`;
    case "createListener":
      return `create ${op.listener.protocol} listener on port ${op.listener.port} -> ${op.listener.targetGroupName}`;
    case "modifyListener":
      return `change listener on port ${op.listener.port} to ${op.listener.protocol} -> ${op.listener.targetGroupName}`;
    case "deleteListener":
      return `delete listener on port ${op.port}`;
    case "deleteTargetGroup":
      return `delete target group ${op.name}`;
    case "deleteLoadBalancer":
      return `delete NLB ${op.name} (${op.reason})`;
    case "deleteSecurityGroup":
      return `delete security group ${op.name}`;
  }
}
