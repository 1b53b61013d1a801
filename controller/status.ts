// What Portico writes into a Service's status: the ingress points and one condition. Pure: it computes the
// patch, or nothing when the status already says it, so a no-change resync writes nothing.
import type { V1Condition, V1LoadBalancerIngress, V1Service } from "@kubernetes/client-node";
import type { IngressPoint } from "../providers/provider.ts";

export const READY_CONDITION = "portico.io/LoadBalancerReady";

export interface ConditionState {
  status: "True" | "False";
  reason: string;
  message: string;
}

export interface StatusPatch {
  status: { loadBalancer?: { ingress: V1LoadBalancerIngress[] }; conditions?: V1Condition[] };
}

/**
 * The status patch that makes `svc` show `ingress` (undefined: leave it as it is) and `condition`
 * (undefined: remove Portico's condition), or undefined when nothing would change.
 */
export function statusPatch(
  svc: V1Service,
  ingress: IngressPoint[] | undefined,
  condition: ConditionState | undefined,
  now = new Date(),
): StatusPatch | undefined {
  const patch: StatusPatch = { status: {} };
  if (ingress) {
    const wanted = ingress.map(toIngress);
    if (!sameIngress(svc.status?.loadBalancer?.ingress ?? [], wanted))
      patch.status.loadBalancer = { ingress: wanted };
  }
  const existing = svc.status?.conditions?.find((c) => c.type === READY_CONDITION);
  if (condition) {
    const unchanged =
      existing &&
      existing.status === condition.status &&
      existing.reason === condition.reason &&
      existing.message === condition.message &&
      existing.observedGeneration === svc.metadata?.generation;
    if (!unchanged) {
      patch.status.conditions = [
        {
          type: READY_CONDITION,
          status: condition.status,
          reason: condition.reason,
          message: condition.message.slice(0, 32_768),
          ...(svc.metadata?.generation ? { observedGeneration: svc.metadata.generation } : {}),
          // The transition time moves only when the status flips, as the API conventions ask.
          lastTransitionTime:
            existing && existing.status === condition.status ? existing.lastTransitionTime : now,
        },
      ];
    }
  } else if (existing) {
    // A strategic merge patch merges conditions by type; this directive deletes just Portico's.
    patch.status.conditions = [{ type: READY_CONDITION, $patch: "delete" } as unknown as V1Condition];
  }
  return Object.keys(patch.status).length ? patch : undefined;
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
