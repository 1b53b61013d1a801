import type { V1Node } from "@kubernetes/client-node";
import type { LabelMatcher } from "../shared/labelSelector.ts";

export const EXCLUDE_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers";
export const AUTOSCALER_DELETION_TAINT = "ToBeDeletedByClusterAutoscaler";
export const ZONE_LABEL = "topology.kubernetes.io/zone";

/**
 * Why a node may not carry load-balancer traffic, or undefined when it may. A node must be Ready, not
 * being deleted, not excluded by label, not about to be removed by the cluster autoscaler, and match the
 * target-node selectors (the controller's and the Service's).
 */
export function ineligibility(node: V1Node, selectors: LabelMatcher[] = []): string | undefined {
  if (node.metadata?.deletionTimestamp) return "being deleted";
  const labels = node.metadata?.labels ?? {};
  if (EXCLUDE_LABEL in labels) return `labelled ${EXCLUDE_LABEL}`;
  if (node.spec?.taints?.some((t) => t.key === AUTOSCALER_DELETION_TAINT))
    return `tainted ${AUTOSCALER_DELETION_TAINT}`;
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status !== "True") return "not Ready";
  if (!selectors.every((matches) => matches(labels))) return "not matched by the target-node selector";
  return undefined;
}

export function isEligible(node: V1Node, selectors: LabelMatcher[] = []): boolean {
  return ineligibility(node, selectors) === undefined;
}

/**
 * The fields of a Node that eligibility and targets depend on; a Node update that changes none of them
 * (a heartbeat, say) does not need any Service reconciled again.
 */
export function nodeFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status;
  const internalIP = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
  return JSON.stringify([
    node.metadata?.labels ?? {},
    Boolean(node.metadata?.deletionTimestamp),
    node.spec?.taints?.map((t) => t.key) ?? [],
    node.spec?.providerID,
    ready,
    internalIP,
  ]);
}
