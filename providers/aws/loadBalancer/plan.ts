// The NLB's part of a plan, pure: made when missing (with the PrivateLink setting CreateLoadBalancer cannot say), or
// its subnets, security groups and attributes brought to what is desired; a load balancer the desired one replaces
// is deleted only after everything else is made (make-before-break).
import { ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS as M } from "../annotations/settings.ts";
import { listed, type Describers, type ResourcePlan } from "../resourcePlan.ts";
import { OWN_SECURITY_GROUP, type DesiredLoadBalancer, type ObservedLoadBalancer } from "../model.ts";
import { DEFAULT_LB_ATTRIBUTES } from "./desired.ts";
import type { LoadBalancerOperation } from "./operations.ts";

export function planLoadBalancer(
  desired: DesiredLoadBalancer,
  current: ObservedLoadBalancer | undefined,
  replaced: ObservedLoadBalancer[],
  ownGroupId: string | undefined,
): ResourcePlan<LoadBalancerOperation> {
  const make: LoadBalancerOperation[] = [];
  if (!current) {
    make.push({ kind: "createLoadBalancer", loadBalancer: desired });
    // CreateLoadBalancer cannot say it; SetSecurityGroups can, right after.
    if (desired.privateLinkInboundRules)
      make.push({
        kind: "setSecurityGroups",
        groupIds: nlbSecurityGroups(desired, ownGroupId),
        privateLink: desired.privateLinkInboundRules,
      });
  } else {
    if (desired.nameFixed) checkImmutable(desired, current);
    if (!sameSet(current.subnets, desired.subnets))
      make.push({ kind: "setSubnets", subnets: desired.subnets });
    const wanted = nlbSecurityGroups(desired, ownGroupId);
    const privateLink =
      desired.privateLinkInboundRules && desired.privateLinkInboundRules !== current.privateLinkInboundRules
        ? { privateLink: desired.privateLinkInboundRules }
        : {};
    if (!sameSet(current.securityGroups, wanted) || "privateLink" in privateLink)
      make.push({ kind: "setSecurityGroups", groupIds: wanted, ...privateLink });
  }
  // An attribute not reported has its default value.
  const now: Record<string, string> = { ...DEFAULT_LB_ATTRIBUTES, ...current?.attributes };
  const attributes = Object.fromEntries(Object.entries(desired.attributes).filter(([k, v]) => now[k] !== v));
  // Access logs left on by a removed annotation are turned off (not every API reports the key while it is off).
  if (
    current?.attributes["access_logs.s3.enabled"] === "true" &&
    !("access_logs.s3.enabled" in desired.attributes)
  )
    attributes["access_logs.s3.enabled"] = "false";
  if (Object.keys(attributes).length) make.push({ kind: "modifyLoadBalancerAttributes", attributes });
  return {
    make,
    break: replaced.map((lb) => ({
      kind: "deleteLoadBalancer",
      loadBalancerArn: lb.arn,
      name: lb.name,
      reason: `replaced by ${desired.name}`,
    })),
  };
}

/** A Service removed: its load balancers first (their listeners go with them). */
export function planLoadBalancerDeletion(loadBalancers: ObservedLoadBalancer[]): LoadBalancerOperation[] {
  return loadBalancers.map((lb) => ({
    kind: "deleteLoadBalancer",
    loadBalancerArn: lb.arn,
    name: lb.name,
    reason: "Service no longer needs it",
  }));
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

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

export const loadBalancerDescriptions: Describers<LoadBalancerOperation> = {
  createLoadBalancer: (op) =>
    `create ${op.loadBalancer.scheme} NLB ${op.loadBalancer.name} in ${op.loadBalancer.subnets.join(", ")}`,
  setSubnets: (op) => `set subnets to ${op.subnets.join(", ")}`,
  setSecurityGroups: (op) =>
    `set the load balancer's security groups to ${op.groupIds.map((g) => (g === OWN_SECURITY_GROUP ? "its own" : g)).join(", ")}`,
  modifyLoadBalancerAttributes: (op) => `set load balancer attributes ${listed(op.attributes)}`,
  deleteLoadBalancer: (op) => `delete NLB ${op.name} (${op.reason})`,
};
