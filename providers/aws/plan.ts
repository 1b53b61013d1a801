// The plan: the smallest list of ELBv2/EC2 operations that turns what is observed into what is desired.
// Pure: the same inputs always give the same plan, so it is unit-tested exhaustively and shown by
// `porticoctl plan` without touching the cloud. Operations are ordered make-before-break.
import { ConfigurationError } from "../errors.ts";
import { AWS_ANNOTATIONS as M } from "./annotations/settings.ts";
import { planBackendRules, ruleKey as backendRuleKey } from "./securityGroups/backendRules.ts";
import { OWN_SECURITY_GROUP } from "./model.ts";
import { DEFAULT_LB_ATTRIBUTES, DEFAULT_TG_ATTRIBUTES } from "./desired.ts";
import type {
  BackendRule,
  DesiredListener,
  ListenerProtocol,
  DesiredLoadBalancer,
  DesiredSecurityGroup,
  DesiredTargetGroup,
  HealthCheck,
  IngressRule,
  Observed,
  ObservedBackendRule,
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
  /** The NLB's groups; OWN_SECURITY_GROUP stands for the Service's own until it is made. */
  | { kind: "setSecurityGroups"; groupIds: string[]; privateLink?: "on" | "off" }
  | { kind: "authorizeBackendRules"; groupId: string; rules: BackendRule[] }
  | { kind: "revokeBackendRules"; groupId: string; rules: ObservedBackendRule[] }
  | { kind: "addListenerCertificates"; listenerArn: string; port: number; certificateArns: string[] }
  | { kind: "removeListenerCertificates"; listenerArn: string; port: number; certificateArns: string[] }
  | {
      kind: "modifyListenerAttributes";
      listenerArn: string;
      port: number;
      attributes: Record<string, string>;
    }
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
  | {
      kind: "modifyListener";
      listenerArn: string;
      listener: DesiredListener;
      /** The listener's protocol now: ModifyListener names the protocol only when it changes. */
      protocolNow: ListenerProtocol;
    }
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

  const own = desired.securityGroup;
  const group = own && observed.securityGroups.find((g) => g.name === own.name);
  if (own && !group) ops.push({ kind: "createSecurityGroup", group: own });
  else if (own && group) {
    const { add, remove } = diff(own.ingress, group.ingress, ruleKey);
    if (add.length) ops.push({ kind: "authorizeIngress", groupId: group.id, rules: add });
    if (remove.length) ops.push({ kind: "revokeIngress", groupId: group.id, rules: remove });
  }
  const backend = planBackendRules(desired.backendRules, observed.backendRules);
  for (const [groupId, rules] of backend.authorize)
    ops.push({ kind: "authorizeBackendRules", groupId, rules });

  if (!current) {
    ops.push({ kind: "createLoadBalancer", loadBalancer: desired });
    // CreateLoadBalancer cannot say it; SetSecurityGroups can, right after.
    if (desired.privateLinkInboundRules)
      ops.push({
        kind: "setSecurityGroups",
        groupIds: nlbSecurityGroups(desired, group?.id),
        privateLink: desired.privateLinkInboundRules,
      });
  } else {
    if (desired.nameFixed) checkImmutable(desired, current);
    if (!sameSet(current.subnets, desired.subnets))
      ops.push({ kind: "setSubnets", subnets: desired.subnets });
    const wanted = nlbSecurityGroups(desired, group?.id);
    const privateLink =
      desired.privateLinkInboundRules && desired.privateLinkInboundRules !== current.privateLinkInboundRules
        ? { privateLink: desired.privateLinkInboundRules }
        : {};
    if (!sameSet(current.securityGroups, wanted) || "privateLink" in privateLink)
      ops.push({ kind: "setSecurityGroups", groupIds: wanted, ...privateLink });
  }
  // An attribute not reported has its default value.
  const lbAttributes = changed(desired.attributes, { ...DEFAULT_LB_ATTRIBUTES, ...current?.attributes });
  // Access logs left on by a removed annotation are turned off (not every API reports the key while it is off).
  if (
    current?.attributes["access_logs.s3.enabled"] === "true" &&
    !("access_logs.s3.enabled" in desired.attributes)
  )
    lbAttributes["access_logs.s3.enabled"] = "false";
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
    else {
      if (!sameListener(existing, listener, tg))
        ops.push({
          kind: "modifyListener",
          listenerArn: existing.arn,
          listener,
          protocolNow: existing.protocol,
        });
      ops.push(...listenerDetailOps(existing, listener));
    }
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
  // Portico's own rules go before any group they name can be deleted.
  for (const [groupId, rules] of backend.revoke) ops.push({ kind: "revokeBackendRules", groupId, rules });
  for (const g of observed.securityGroups) {
    if (g.name !== own?.name) ops.push({ kind: "deleteSecurityGroup", groupId: g.id, name: g.name });
  }
  return { operations: ops, ...(current ? { current } : {}), replaced };
}

/**
 * The groups the NLB carries: its own (OWN_SECURITY_GROUP until made) or the user's, and the cluster's shared
 * backend group when Portico manages backend rules.
 */
export function nlbSecurityGroups(desired: DesiredLoadBalancer, ownId: string | undefined): string[] {
  const groups = desired.securityGroup ? [ownId ?? OWN_SECURITY_GROUP] : [...desired.userSecurityGroups];
  if (desired.sharedBackendGroup) groups.push(desired.sharedBackendGroup);
  return groups;
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
    ...revokeAll(observed.backendRules),
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
  const attributes = changed(desired.attributes, { ...DEFAULT_TG_ATTRIBUTES, ...observed.attributes });
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
    observed.certificateArns[0] === desired.certificateArns[0] &&
    (desired.sslPolicy === undefined || observed.sslPolicy === desired.sslPolicy) &&
    // A TLS listener without the annotation goes back to no ALPN ("None"), as ELBv2 makes it.
    (desired.protocol !== "TLS" || (observed.alpnPolicy ?? "None") === (desired.alpnPolicy ?? "None"))
  );
}

/** The certificates beyond the default one, and the listener's attributes the Service sets. */
function listenerDetailOps(observed: ObservedListener, desired: DesiredListener): Operation[] {
  const ops: Operation[] = [];
  const base = { listenerArn: observed.arn, port: observed.port };
  const want = desired.certificateArns.slice(1).filter((c) => c !== desired.certificateArns[0]);
  const have = observed.certificateArns.slice(1);
  const add = want.filter((c) => !have.includes(c));
  // The listener's new default certificate, once ModifyListener set it, is no extra to remove.
  const remove = have.filter((c) => !want.includes(c) && c !== desired.certificateArns[0]);
  if (add.length) ops.push({ kind: "addListenerCertificates", ...base, certificateArns: add });
  if (remove.length) ops.push({ kind: "removeListenerCertificates", ...base, certificateArns: remove });
  const attributes = changed(desired.attributes, observed.attributes);
  if (Object.keys(attributes).length) ops.push({ kind: "modifyListenerAttributes", ...base, attributes });
  return ops;
}

function revokeAll(rules: ObservedBackendRule[]): Operation[] {
  const byGroup = new Map<string, ObservedBackendRule[]>();
  for (const r of rules) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
  return [...byGroup].map(([groupId, rs]) => ({ kind: "revokeBackendRules", groupId, rules: rs }));
}

/**
 * What a Service's fixed name (the `name` annotation) keeps from being replaced: with a generated name, these
 * are part of the name and a change makes a new NLB instead.
 */
function checkImmutable(desired: DesiredLoadBalancer, current: ObservedLoadBalancer): void {
  // Wanting groups on an NLB that has none is left to SetSecurityGroups (it may have lost them); an NLB made
  // with groups can never be without.
  const wantsGroups = desired.securityGroup !== undefined || desired.userSecurityGroups.length > 0;
  if (!wantsGroups && current.securityGroups.length > 0)
    throw new ConfigurationError(
      "ImmutableChange",
      `metadata.annotations[${M.disableNlbSg}]`,
      `NLB ${current.name} was made with security groups, which it cannot lose`,
      "remove the name annotation so that Portico can make a new NLB, or set the annotation back",
    );
  const mapping = (m: {
    subnetId: string;
    allocationId?: string;
    privateIPv4Address?: string;
    ipv6Address?: string;
  }) => `${m.subnetId}=${m.allocationId ?? ""}/${m.privateIPv4Address ?? ""}/${m.ipv6Address ?? ""}`;
  if (desired.subnetMappings) {
    const want = desired.subnetMappings.map(mapping).sort();
    const have = current.subnetMappings
      .map((m) => ({
        subnetId: m.subnetId,
        ...(desired.subnetMappings!.some((d) => d.allocationId) && m.allocationId
          ? { allocationId: m.allocationId }
          : {}),
        ...(desired.subnetMappings!.some((d) => d.privateIPv4Address) && m.privateIPv4Address
          ? { privateIPv4Address: m.privateIPv4Address }
          : {}),
        ...(desired.subnetMappings!.some((d) => d.ipv6Address) && m.ipv6Address
          ? { ipv6Address: m.ipv6Address }
          : {}),
      }))
      .map(mapping)
      .sort();
    if (want.join() !== have.join())
      throw new ConfigurationError(
        "ImmutableChange",
        `metadata.annotations[${M.eipAllocations}]`,
        `NLB ${current.name} has other static addresses, which cannot change in place`,
        "remove the name annotation so that Portico can make a new NLB with them",
      );
  }
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
      return `set the load balancer's security groups to ${op.groupIds.map((g) => (g === OWN_SECURITY_GROUP ? "its own" : g)).join(", ")}`;
    case "authorizeBackendRules":
      return `allow ${op.rules.map(backendRuleKey).join(", ")} (backend rules)`;
    case "revokeBackendRules":
      return `revoke ${op.rules.map(backendRuleKey).join(", ")} (backend rules)`;
    case "addListenerCertificates":
      return `add certificates ${op.certificateArns.join(", ")} to the listener on port ${op.port}`;
    case "removeListenerCertificates":
      return `remove certificates ${op.certificateArns.join(", ")} from the listener on port ${op.port}`;
    case "modifyListenerAttributes":
      return `set attributes of the listener on port ${op.port}: ${Object.entries(op.attributes)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`;
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
