// Which nodes may carry load-balancer traffic: one rule for the controller (instance targets, Azure backend
// pools) and the speaker (the nodes that may announce an address), so that a node leaving the cluster leaves the
// clouds' load balancers and stops announcing on bare metal alike.
//
// A node leaves before its pods do. `kubectl drain` cordons the node before it evicts anything, the cluster
// autoscaler taints a node before it removes it, and a deleted node is marked before it goes: taking the node out
// of the load balancer at that first sign lets its connections drain (the target group's deregistration delay, a
// speaker's handover) while the pods behind it are still running, instead of after they are gone.
//
// Cordoning is the one sign that does not always mean the node is going: operators cordon nodes for weeks while
// their pods move off at their own pace. For `externalTrafficPolicy: Cluster` that costs nothing, since every
// other node forwards to the same pods. For `Local` it would cut off the pods still running on the node, the outage
// that made Kubernetes' service controller stop excluding unschedulable nodes (kubernetes#44997, #90823): so for
// Local a cordoned node stays, and leaves as its endpoints do (evicted pods stop being ready endpoints, and
// kube-proxy's health check on the node then fails).
import type { V1Node } from "@kubernetes/client-node";
import type { LabelMatcher } from "./labelSelector.ts";

export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
export const AUTOSCALER_DELETION_TAINT = "ToBeDeletedByClusterAutoscaler";
export const CORDONED = "cordoned (spec.unschedulable)";

/** Why the node is on its way out of the load balancers, or undefined when it is not. */
export function leaving(node: V1Node): string | undefined {
  if (node.metadata?.deletionTimestamp) return "being deleted";
  if (EXCLUDE_LABEL in (node.metadata?.labels ?? {})) return `labelled ${EXCLUDE_LABEL}`;
  if (node.spec?.taints?.some((t) => t.key === AUTOSCALER_DELETION_TAINT))
    return `tainted ${AUTOSCALER_DELETION_TAINT}`;
  if (node.spec?.unschedulable) return CORDONED;
  return undefined;
}

/**
 * Why a node may not carry load-balancer traffic, or undefined when it may: it must be Ready, not leaving, and
 * match every selector given (the controller's and the Service's target-node selectors). Cordoning is the last
 * reason given, so that CORDONED means the node would qualify but for it.
 */
export function ineligibility(node: V1Node, selectors: readonly LabelMatcher[] = []): string | undefined {
  const why = leaving(node);
  if (why && why !== CORDONED) return why;
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status !== "True") return "not Ready";
  const labels = node.metadata?.labels ?? {};
  if (!selectors.every((matches) => matches(labels))) return "not matched by the target-node selector";
  return why;
}

/** What a Service's traffic policy makes of cordoned nodes (see above). */
export type Policy = "Cluster" | "Local";

/**
 * The nodes that may carry a Service's traffic. With `Local`, cordoned nodes stay. With `Cluster`, cordoning alone
 * does not empty a load balancer either: when every node that would otherwise qualify is cordoned (a whole cluster
 * cordoned for an upgrade, the last node of a selected group drained), those nodes keep it, since a cordoned node
 * still forwards and an empty load balancer does not.
 */
export function eligibleNodes<N extends V1Node>(
  nodes: readonly N[],
  selectors: readonly LabelMatcher[] = [],
  policy: Policy = "Cluster",
): N[] {
  const reasons = nodes.map((node) => [node, ineligibility(node, selectors)] as const);
  const eligible = reasons.filter(([, why]) => why === undefined).map(([node]) => node);
  const cordoned = reasons.filter(([, why]) => why === CORDONED).map(([node]) => node);
  if (policy === "Local")
    return reasons.filter(([, why]) => why === undefined || why === CORDONED).map(([n]) => n);
  return eligible.length > 0 ? eligible : cordoned;
}
