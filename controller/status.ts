// What Portico writes into a Service's status: the ingress points and two conditions — LoadBalancerReady (the
// load balancer is made as asked) and Serving (traffic can reach a backend through it) — and how all of it is
// taken back when Portico lets the Service go. Pure: it computes the patch, or nothing when the status already
// says it, so a no-change resync writes nothing.
import type { V1Condition, V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import type { IngressPoint } from "../providers/provider.ts";

import {
  PORTICO_CONDITIONS,
  READY_CONDITION,
  SERVING_CONDITION,
  type PorticoCondition,
} from "../shared/conditions.ts";

export { PORTICO_CONDITIONS, READY_CONDITION, SERVING_CONDITION };

export interface ConditionState {
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

export interface StatusPatch {
  status: { loadBalancer?: { ingress: V1LoadBalancerIngress[] }; conditions?: V1Condition[] };
}

/**
 * The status patch that makes `svc` show `ingress` (undefined: leave it as it is), `condition` as its Ready
 * condition (undefined: remove it) and `serving` as its Serving condition (undefined: leave it; null: remove
 * it), or undefined when nothing would change.
 */
export function statusPatch(
  svc: V1Service,
  ingress: IngressPoint[] | undefined,
  condition: ConditionState | undefined,
  now = new Date(),
  serving?: ConditionState | null,
): StatusPatch | undefined {
  const patch: StatusPatch = { status: {} };
  if (ingress) {
    const wanted = ingress.map(toIngress);
    if (!sameIngress(svc.status?.loadBalancer?.ingress ?? [], wanted))
      patch.status.loadBalancer = { ingress: wanted };
  }
  const conditions = [
    conditionChange(svc, READY_CONDITION, condition ?? null, now),
    ...(serving === undefined ? [] : [conditionChange(svc, SERVING_CONDITION, serving, now)]),
  ].filter((c): c is V1Condition => c !== undefined);
  if (conditions.length) patch.status.conditions = conditions;
  return Object.keys(patch.status).length ? patch : undefined;
}

/**
 * The patch that takes back everything Portico wrote into the Service's status, for a Service it lets go: the
 * ingress points and every condition type of its own (PORTICO_CONDITIONS), or undefined when none is there.
 */
export function releasePatch(svc: V1Service): StatusPatch | undefined {
  const patch: StatusPatch = { status: {} };
  if (svc.status?.loadBalancer?.ingress?.length) patch.status.loadBalancer = { ingress: [] };
  const conditions = PORTICO_CONDITIONS.map((type) => conditionChange(svc, type, null, new Date())).filter(
    (c): c is V1Condition => c !== undefined,
  );
  if (conditions.length) patch.status.conditions = conditions;
  return Object.keys(patch.status).length ? patch : undefined;
}

/** The entry that sets (or with null deletes) one condition, or undefined when it already says that. */
function conditionChange(
  svc: V1Service,
  type: PorticoCondition,
  state: ConditionState | null,
  now: Date,
): V1Condition | undefined {
  const existing = svc.status?.conditions?.find((c) => c.type === type);
  if (!state) {
    // A strategic merge patch merges conditions by type; this directive deletes just this one.
    return existing ? ({ type, $patch: "delete" } as unknown as V1Condition) : undefined;
  }
  const unchanged =
    existing &&
    existing.status === state.status &&
    existing.reason === state.reason &&
    existing.message === state.message &&
    existing.observedGeneration === svc.metadata?.generation;
  if (unchanged) return undefined;
  return {
    type,
    status: state.status,
    reason: state.reason,
    message: state.message.slice(0, 32_768),
    ...(svc.metadata?.generation ? { observedGeneration: svc.metadata.generation } : {}),
    // The transition time moves only when the status flips, as the API conventions ask.
    lastTransitionTime: existing && existing.status === state.status ? existing.lastTransitionTime : now,
  };
}

function toIngress(p: IngressPoint): V1LoadBalancerIngress {
  return {
    ...(p.hostname ? { hostname: p.hostname } : {}),
    ...(p.ip ? { ip: p.ip } : {}),
    ...(p.ipMode ? { ipMode: p.ipMode } : {}),
  };
}

function sameIngress(a: V1LoadBalancerIngress[], b: V1LoadBalancerIngress[]): boolean {
  const key = (i: V1LoadBalancerIngress) => `${i.hostname ?? ""}|${i.ip ?? ""}|${i.ipMode ?? ""}`;
  return a.length === b.length && a.map(key).sort().join() === b.map(key).sort().join();
}
