import type { V1Node } from "@kubernetes/client-node";

/**
 * The fields of a Node that eligibility (shared/nodeEligibility.ts) and targets depend on; a Node update that changes none of them
 * (a heartbeat, say) does not need any Service reconciled again.
 */
export function nodeFingerprint(node: V1Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status;
  const internalIP = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
  return JSON.stringify([
    node.metadata?.labels ?? {},
    Boolean(node.metadata?.deletionTimestamp),
    node.spec?.taints?.map((t) => t.key) ?? [],
    Boolean(node.spec?.unschedulable),
    node.spec?.providerID,
    ready,
    internalIP,
  ]);
}
