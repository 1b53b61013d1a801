// Whether an NLB can carry a Service's traffic: every listener's target group needs a target that passes its
// health check, and behind the targets a ready endpoint the packets can reach (ELBv2's word alone is not enough:
// an instance target can pass a TCP check on its node port while kube-proxy there has no endpoint to forward to).
// Pure: it reads the desired target groups (what is registered once the reconcile is done), the cluster's
// endpoints, and the health ELBv2 last reported for the targets that were registered before (newly registered
// ones are in ELBv2's "initial" state until their first checks pass).
import { endpointsBlock, type TrafficPath } from "../endpointTraffic.ts";
import type { LoadBalancerIntent, PodDrain, TrafficState } from "../provider.ts";
import { instanceIdFromProviderID } from "./names.ts";
import type { DesiredLoadBalancer, Observed } from "./model.ts";

/** ELBv2's target states: healthy, initial, unhealthy, unused, draining, unavailable, unhealthy.draining. */
export type TargetStates = ReadonlyMap<string, { state: string; reason?: string }>;

export const targetKey = (targetGroupName: string, id: string, port: number) =>
  `${targetGroupName}|${id}:${port}`;

/** The health ELBv2 reported for every target of the observed target groups, by target group name. */
export function statesOf(observed: Observed): TargetStates {
  const out = new Map<string, { state: string; reason?: string }>();
  for (const tg of observed.targetGroups)
    for (const [target, health] of Object.entries(tg.health ?? {})) out.set(`${tg.name}|${target}`, health);
  return out;
}

interface PortHealth {
  port: number;
  total: number;
  healthy: number;
  pending: number;
  /** ELBv2's description of one failing target, for the message. */
  why?: string;
}

/** The nodes whose instances are targets, or the pods themselves for ip targets. */
function trafficPath(intent: LoadBalancerIntent, desired: DesiredLoadBalancer): TrafficPath {
  if (desired.targetGroups.every((tg) => tg.targetType === "ip")) return { kind: "pods" };
  const ids = new Set(desired.targetGroups.flatMap((tg) => tg.targets.map((t) => t.id)));
  const names = intent.nodes
    .filter((n) => ids.has(instanceIdFromProviderID(n.providerID) ?? ""))
    .map((n) => n.name);
  return { kind: "nodes", names: new Set(names) };
}

export function awsTraffic(
  intent: LoadBalancerIntent,
  desired: DesiredLoadBalancer,
  states: TargetStates,
): TrafficState {
  const ports: PortHealth[] = desired.listeners.map((listener) => {
    const tg = desired.targetGroups.find((t) => t.name === listener.targetGroupName);
    const health: PortHealth = { port: listener.port, total: 0, healthy: 0, pending: 0 };
    for (const target of tg?.targets ?? []) {
      health.total++;
      const seen = states.get(targetKey(tg!.name, target.id, target.port));
      // Not seen before: registered by this reconcile, so ELBv2 holds it in "initial".
      const state = seen?.state ?? "initial";
      if (state === "healthy") health.healthy++;
      else if (state === "initial" || state === "unavailable") health.pending++;
      else health.why ??= `${target.id}:${target.port} ${state}${seen?.reason ? ` (${seen.reason})` : ""}`;
    }
    return health;
  });
  // The cluster first: with no ready endpoint (which also leaves ip target groups empty) that is the cause to fix.
  const blocked = endpointsBlock(intent, trafficPath(intent, desired));
  if (blocked) return blocked;
  const empty = ports.filter((p) => p.total === 0);
  if (empty.length)
    return {
      flowing: false,
      reason: "NoTargets",
      // Targets are the eligible nodes or the ready endpoints: only the cluster changes them.
      untilClusterChanges: true,
      message: `no target is registered for port ${empty.map((p) => p.port).join(", ")}: no eligible node (or, for ip targets, no ready endpoint) — see porticoctl doctor`,
    };
  const failing = ports.filter((p) => p.healthy === 0 && p.pending === 0);
  if (failing.length)
    return {
      flowing: false,
      reason: "TargetsUnhealthy",
      message: `every target of port ${failing.map((p) => p.port).join(", ")} fails its health check (${failing[0]!.why})`,
    };
  const waiting = ports.filter((p) => p.healthy === 0);
  if (waiting.length)
    return {
      flowing: undefined,
      reason: "HealthChecksPending",
      message: `the targets of port ${waiting.map((p) => p.port).join(", ")} have not passed their first health checks yet`,
    };
  const healthy = ports.reduce((n, p) => n + p.healthy, 0);
  const total = ports.reduce((n, p) => n + p.total, 0);
  return { flowing: true, reason: "TargetsHealthy", message: `${healthy} of ${total} targets healthy` };
}

/**
 * The pods ELBv2 reports healthy in every ip target group that holds them (what was observed before this
 * pass: a target registered by it is still initial), which opens their readiness gates.
 */
export function healthyEndpoints(desired: DesiredLoadBalancer, states: TargetStates): string[] | undefined {
  // Instance targets: the NLB sends to nodes, and no pod's health is ELBv2's to tell.
  if (!desired.targetGroups.some((tg) => tg.targetType === "ip")) return undefined;
  const verdict = new Map<string, boolean>();
  for (const tg of desired.targetGroups) {
    if (tg.targetType !== "ip") continue;
    for (const target of tg.targets) {
      const healthy = states.get(targetKey(tg.name, target.id, target.port))?.state === "healthy";
      verdict.set(target.id, (verdict.get(target.id) ?? true) && healthy);
    }
  }
  return [...verdict].filter(([, healthy]) => healthy).map(([ip]) => ip);
}

/**
 * How long the NLB goes on with a removed pod's open connections: the longest deregistration delay of the ip
 * target groups (instance targets are nodes, which a pod's stop does not deregister).
 */
export function podDrain(desired: DesiredLoadBalancer): PodDrain | undefined {
  const delays = desired.targetGroups
    .filter((tg) => tg.targetType === "ip")
    .map((tg) => Number(tg.attributes[DEREGISTRATION_DELAY] ?? 300));
  if (!delays.length) return undefined;
  return {
    seconds: Math.max(...delays),
    setting:
      `the target groups' ${DEREGISTRATION_DELAY} (annotation ` +
      `service.beta.kubernetes.io/aws-load-balancer-target-group-attributes: ${DEREGISTRATION_DELAY}=<seconds>)`,
  };
}

const DEREGISTRATION_DELAY = "deregistration_delay.timeout_seconds";
