// Taking over what the AWS Load Balancer Controller (LBC) made for a Service, in place: its NLB keeps its ARN and
// DNS name, so clients see no change. Pure: recognising LBC's resources by the tags LBC writes, deciding whether
// they can serve the Service as Portico would make it, and renaming the desired load balancer after them.
// The I/O (reading LBC's resources, retagging them) is takeOver.ts.
import { createHash } from "node:crypto";
import type { ServiceRef } from "../../provider.ts";
import type { DesiredLoadBalancer, Observed, ObservedLoadBalancer, ObservedTargetGroup } from "../model.ts";
import { TAG, targetGroupName } from "../names.ts";
import { AWS_ANNOTATIONS as M } from "../annotations/settings.ts";

/**
 * The tags LBC's tracking provider writes (pkg/deploy/tracking): the cluster (its --cluster-name), the stack (a
 * Service's `namespace/name`, an Ingress group's name or an Ingress's `namespace/name`) and the resource's ID in
 * the stack: `LoadBalancer` for a Service's NLB, `namespace/name:port` for the target group of a Service port.
 */
export const LBC_TAG = {
  cluster: "elbv2.k8s.aws/cluster",
  serviceStack: "service.k8s.aws/stack",
  serviceResource: "service.k8s.aws/resource",
  ingressStack: "ingress.k8s.aws/stack",
} as const;
export const LBC_LOAD_BALANCER_RESOURCE = "LoadBalancer";
/** LBC's finalizer on the Services it serves. */
export const LBC_FINALIZER = "service.k8s.aws/resources";
/** Written with Portico's ownership tags on what it took over: where it came from, for people. */
export const ADOPTED_TAG = "portico.io/adopted-from";
export const ADOPTED_FROM_LBC = "aws-load-balancer-controller";

export interface TaggedArn {
  arn: string;
  tags: Record<string, string | undefined>;
}

/** LBC's resources for one Service: its NLB, and its target groups with the Service port each served. */
export interface LbcFound {
  loadBalancerArn?: string;
  targetGroups: { arn: string; port: number }[];
}

/**
 * LBC's resources for the Service among tagged ones: made for `lbcCluster`, in the Service's stack, and not
 * an Ingress's. Anything that carries Portico's ownership tags for anything else is not taken; one already
 * tagged for this Service but still carrying LBC's tags (a take-over cut short) is, to finish it.
 */
export function recogniseLbc(resources: TaggedArn[], lbcCluster: string, service: ServiceRef): LbcFound {
  const stack = `${service.namespace}/${service.name}`;
  const found: LbcFound = { targetGroups: [] };
  for (const r of resources) {
    const t = r.tags;
    if (t[LBC_TAG.cluster] !== lbcCluster || t[LBC_TAG.serviceStack] !== stack) continue;
    if (t[LBC_TAG.ingressStack] !== undefined) continue;
    if (t[TAG.cluster] !== undefined && t[TAG.serviceUid] !== service.uid) continue;
    const resource = t[LBC_TAG.serviceResource] ?? "";
    // Whether it is an NLB is read from DescribeLoadBalancers' Type, not guessed from the ARN.
    if (r.arn.includes(":loadbalancer/") && resource === LBC_LOAD_BALANCER_RESOURCE) {
      // LBC makes one NLB per Service; a second with the same tags is not something to guess about.
      found.loadBalancerArn ??= r.arn;
      continue;
    }
    const port = r.arn.includes(":targetgroup/") ? portOfResource(resource, stack) : undefined;
    if (port !== undefined) found.targetGroups.push({ arn: r.arn, port });
  }
  found.targetGroups.sort((a, b) => a.port - b.port || a.arn.localeCompare(b.arn));
  return found;
}

function portOfResource(resource: string, stack: string): number | undefined {
  if (!resource.startsWith(`${stack}:`)) return undefined;
  const port = resource.slice(stack.length + 1);
  return /^\d{1,5}$/.test(port) ? Number(port) : undefined;
}

/**
 * The name LBC gives a Service's NLB when the Service does not name it: `k8s-<ns8>-<name8>-<hash10>`, the hash a
 * SHA-256 of its cluster name, the Service's UID and the scheme. After the take-over the NLB keeps it, so Portico
 * knows it again from the same three things, with no state of its own.
 */
export function lbcLoadBalancerName(lbcCluster: string, service: ServiceRef, scheme: string): string {
  const digest = createHash("sha256")
    .update(lbcCluster + service.uid + scheme)
    .digest("hex");
  const clean = (s: string) => s.replace(/[^A-Za-z0-9]/g, "").slice(0, 8);
  return `k8s-${clean(service.namespace)}-${clean(service.name)}-${digest.slice(0, 10)}`;
}

/** An LBC target group as read, with the Service port it served and what DescribeTargetGroups says of its family. */
export interface LbcTargetGroup {
  observed: ObservedTargetGroup;
  port: number;
  ipAddressType: "ipv4" | "ipv6";
}

/** LBC's resources for a Service, described. */
export interface LbcObserved {
  loadBalancer?: ObservedLoadBalancer;
  targetGroups: LbcTargetGroup[];
}

/** What becomes of one of LBC's target groups. */
export interface TargetGroupFate {
  group: LbcTargetGroup;
  /** Serves the desired listener on its port as it is: it keeps its name and targets. */
  inPlace: boolean;
  /** The desired target group it stands for (when in place). */
  desiredName?: string;
  /** Why not in place: Portico makes its own, moves the listener to it, and deletes this one (now Portico's). */
  reason?: string;
}

export type Adoption =
  | { kind: "none" }
  | {
      kind: "adopt";
      loadBalancer?: ObservedLoadBalancer;
      targetGroups: TargetGroupFate[];
      /** LBC's groups on the NLB that Portico's replace: not Portico's to delete, so left for the user. */
      leftSecurityGroups: string[];
    }
  | { kind: "recreate"; loadBalancer: ObservedLoadBalancer; reasons: string[] };

/**
 * What cannot change on an existing NLB and differs from what the Service asks for: any of these means a new
 * NLB (a new DNS name), which Portico never decides alone.
 */
export function adoptionBlockers(desired: DesiredLoadBalancer, lb: ObservedLoadBalancer): string[] {
  const reasons: string[] = [];
  if (lb.scheme !== desired.scheme)
    reasons.push(
      `it is ${lb.scheme} and the Service asks for ${desired.scheme} (an NLB's scheme cannot change)`,
    );
  if (lb.ipAddressType !== desired.ipAddressType)
    reasons.push(`its IP address type is ${lb.ipAddressType}, the Service asks for ${desired.ipAddressType}`);
  const wantsGroups = desired.securityGroup !== undefined || desired.userSecurityGroups.length > 0;
  if (wantsGroups && lb.securityGroups.length === 0)
    reasons.push(
      `it was made without security groups, which an NLB cannot gain later (set ${M.disableNlbSg}: "true" to keep it without)`,
    );
  if (!wantsGroups && lb.securityGroups.length > 0)
    reasons.push("it has security groups, which an NLB cannot lose");
  if (desired.subnetMappings) {
    const want = desired.subnetMappings.map(
      (m) => `${m.subnetId}=${m.allocationId ?? m.privateIPv4Address ?? ""}`,
    );
    const have = lb.subnetMappings.map((m) => {
      const asked = desired.subnetMappings!.find((d) => d.subnetId === m.subnetId);
      return `${m.subnetId}=${asked?.allocationId ? (m.allocationId ?? "") : asked?.privateIPv4Address ? (m.privateIPv4Address ?? "") : ""}`;
    });
    if (want.sort().join() !== have.sort().join())
      reasons.push("its static addresses differ from the Service's, and cannot change in place");
  }
  return reasons;
}

/** Whether LBC's resources can serve the Service in place, and what becomes of each target group. */
export function decideAdoption(desired: DesiredLoadBalancer, lbc: LbcObserved): Adoption {
  if (!lbc.loadBalancer && !lbc.targetGroups.length) return { kind: "none" };
  if (lbc.loadBalancer) {
    const reasons = adoptionBlockers(desired, lbc.loadBalancer);
    if (reasons.length) return { kind: "recreate", loadBalancer: lbc.loadBalancer, reasons };
  }
  const taken = new Set<string>();
  const targetGroups = lbc.targetGroups.map((group): TargetGroupFate => {
    const listener = desired.listeners.find((l) => l.port === group.port);
    if (!listener) return { group, inPlace: false, reason: `port ${group.port} is no longer a Service port` };
    const want = desired.targetGroups.find((tg) => tg.name === listener.targetGroupName)!;
    const have = group.observed;
    const reason =
      have.protocol !== want.protocol
        ? `its protocol is ${have.protocol}, the Service's port needs ${want.protocol}`
        : have.targetType !== want.targetType
          ? `its targets are ${have.targetType} targets, the Service asks for ${want.targetType}`
          : group.ipAddressType !== (want.ipAddressType ?? "ipv4")
            ? `it holds ${group.ipAddressType} targets, the Service needs ${want.ipAddressType ?? "ipv4"}`
            : taken.has(want.name)
              ? `another of LBC's target groups serves port ${group.port} already`
              : undefined;
    if (reason) return { group, inPlace: false, reason };
    taken.add(want.name);
    return { group, inPlace: true, desiredName: want.name };
  });
  // The user's own groups (named by annotation) stay on the NLB; LBC's own frontend and backend groups do not.
  const leftSecurityGroups = (lbc.loadBalancer?.securityGroups ?? []).filter(
    (g) => !desired.userSecurityGroups.includes(g) && g !== desired.sharedBackendGroup,
  );
  return {
    kind: "adopt",
    ...(lbc.loadBalancer ? { loadBalancer: lbc.loadBalancer } : {}),
    targetGroups,
    leftSecurityGroups,
  };
}

/** Desired names to replace with the taken-over resources' names: the NLB's, and target groups' by desired name. */
export interface Renames {
  loadBalancer?: string;
  targetGroups: Record<string, string>;
}

export function renamesOf(adoption: Adoption): Renames | undefined {
  if (adoption.kind !== "adopt") return undefined;
  const targetGroups: Record<string, string> = {};
  for (const fate of adoption.targetGroups)
    if (fate.inPlace) targetGroups[fate.desiredName!] = fate.group.observed.name;
  return { ...(adoption.loadBalancer ? { loadBalancer: adoption.loadBalancer.name } : {}), targetGroups };
}

/** The desired load balancer under the taken-over names, so that the plan changes them in place. */
export function renamed(desired: DesiredLoadBalancer, renames: Renames): DesiredLoadBalancer {
  const tg = (name: string) => renames.targetGroups[name] ?? name;
  return {
    ...desired,
    ...(renames.loadBalancer ? { name: renames.loadBalancer } : {}),
    targetGroups: desired.targetGroups.map((g) => ({ ...g, name: tg(g.name) })),
    listeners: desired.listeners.map((l) => ({ ...l, targetGroupName: tg(l.targetGroupName) })),
  };
}

/**
 * After the take-over, found again from what Portico observes (its own tags) alone. The NLB: one named as LBC
 * names it for the scheme (`lbcName`) where none has Portico's own name (a name fixed by annotation is the same
 * for both). Each target group: the one the NLB's listener forwards to, when it has the protocol and target type
 * the port asks for and a name Portico would not have given it (one Portico made, for a node port or VPC since
 * changed, is replaced as usual). Undefined when there is nothing to rename.
 */
export function adoptedNames(
  desired: DesiredLoadBalancer,
  observed: Observed,
  lbcName: string,
  service: ServiceRef,
): Renames | undefined {
  const own = observed.loadBalancers.find((l) => l.name === desired.name);
  const lb = own ?? observed.loadBalancers.find((l) => l.name === lbcName && l.scheme === desired.scheme);
  if (!lb) return undefined;
  const targetGroups: Record<string, string> = {};
  const names = new Set(observed.targetGroups.map((tg) => tg.name));
  for (const listener of desired.listeners) {
    const want = desired.targetGroups.find((tg) => tg.name === listener.targetGroupName);
    const arn = lb.listeners.find((l) => l.port === listener.port)?.targetGroupArn;
    const have = observed.targetGroups.find((tg) => tg.arn === arn);
    if (!want || !have || names.has(want.name) || Object.values(targetGroups).includes(have.name)) continue;
    // Either address family: the group may be Portico's from before a family change.
    const porticos = [undefined, "ipv6"].map((ipAddressType) =>
      targetGroupName(service, {
        loadBalancer: desired.name,
        protocol: have.protocol,
        port: have.port,
        targetType: have.targetType,
        vpcId: want.vpcId,
        listenerPort: listener.port,
        ...(ipAddressType ? { ipAddressType } : {}),
      }),
    );
    if (
      !porticos.includes(have.name) &&
      have.protocol === want.protocol &&
      have.targetType === want.targetType
    )
      targetGroups[want.name] = have.name;
  }
  if (own && !Object.keys(targetGroups).length) return undefined;
  return { ...(own ? {} : { loadBalancer: lb.name }), targetGroups };
}

/** One line per thing taken over, kept or made anew: for Events, `porticoctl plan` and `porticoctl migrate`. */
export function describeAdoption(adoption: Adoption, recreateAllowed: boolean): string[] {
  switch (adoption.kind) {
    case "none":
      return [];
    case "recreate":
      return [
        `recreate: NLB ${adoption.loadBalancer.arn} (the AWS Load Balancer Controller's) cannot serve the Service in place: ${adoption.reasons.join("; ")}`,
        recreateAllowed
          ? `keep NLB ${adoption.loadBalancer.name} as it is (not Portico's: delete it, its target groups and the finalizer ${LBC_FINALIZER} once traffic has moved to the new NLB)`
          : "refused until the controller runs with --aws-take-over-lbc-recreate, or the Service is changed to match the NLB",
      ];
    case "adopt":
      return [
        ...(adoption.loadBalancer
          ? [
              `adopt NLB ${adoption.loadBalancer.arn} (the AWS Load Balancer Controller's) in place: ${adoption.loadBalancer.dnsName} stays`,
            ]
          : []),
        ...adoption.targetGroups.map((f) =>
          f.inPlace
            ? `adopt target group ${f.group.observed.name} (port ${f.group.port}, ${plural(f.group.observed.targets.length, "target")}) in place`
            : `adopt target group ${f.group.observed.name} (port ${f.group.port}) to replace it: ${f.reason}`,
        ),
        ...adoption.leftSecurityGroups.map(
          (g) =>
            `keep security group ${g} as it is (the AWS Load Balancer Controller's, not Portico's): Portico's groups replace it on the NLB; delete it, and the rules naming it, once nothing uses it`,
        ),
      ];
  }
}

/** An observation with what the take-over would retag added: what the pass after it would observe. */
export function asTaken(observed: Observed, adoption: Adoption | undefined): Observed {
  if (adoption?.kind !== "adopt") return observed;
  // A take-over cut short between its tag calls left resources observation already finds as Portico's.
  const lbs = new Set(observed.loadBalancers.map((lb) => lb.arn));
  const tgs = new Set(observed.targetGroups.map((tg) => tg.arn));
  const lb = adoption.loadBalancer;
  return {
    ...observed,
    loadBalancers: [...observed.loadBalancers, ...(lb && !lbs.has(lb.arn) ? [lb] : [])],
    targetGroups: [
      ...observed.targetGroups,
      ...adoption.targetGroups.map((f) => f.group.observed).filter((tg) => !tgs.has(tg.arn)),
    ],
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
