// Pod readiness gates: a pod of a Service whose load balancer sends traffic to pods carries a gate named after
// the Service, and becomes Ready only once the load balancer reports it healthy. A Deployment's rollout then
// waits for the load balancer before it stops an old pod, where it would otherwise stop it as soon as the new
// pod's own probe passed (NLB ip targets take minutes to register). Pure: what the admission webhook adds to a
// new pod, and what the controller reads back from one.
import type { V1Pod, V1Service } from "@kubernetes/client-node";
import { matchesLabelSelector } from "../../shared/labelSelector.ts";

/** A gate's condition type: this prefix and the Service's name (a Service name is at most 63 characters). */
export const GATE_PREFIX = "target-health.portico.io/";

/**
 * Every namespace's new pods get gates (but kube-system's and Portico's own), at best: where the webhook cannot
 * answer, the pod is made without them. A namespace labelled `<key>: enabled` opts in to the guarantee (no pod
 * made without its gates: the webhook configuration's failure policy Fail), one labelled `<key>: disabled` opts
 * out. The keys: Portico's own, and the AWS Load Balancer Controller's, so that namespaces moving over keep what
 * they asked for; where both are set, Portico's decides.
 */
export const INJECT_LABELS = [
  "portico.io/pod-readiness-gate-inject",
  "elbv2.k8s.aws/pod-readiness-gate-inject",
] as const;
export const INJECT_VALUE = "enabled";
export const OPT_OUT_VALUE = "disabled";

/**
 * Set on every pod that was given a gate, so that the controller watches those pods alone (a label selector is
 * the only filter the apiserver applies to a watch of pods).
 */
export const GATED_POD_LABEL = "portico.io/readiness-gated";

export const gateType = (service: string): string => GATE_PREFIX + service;

/** The Service a condition type is the gate of, or undefined when it is no gate of Portico's. */
export function serviceOfGate(conditionType: string): string | undefined {
  return conditionType.startsWith(GATE_PREFIX) ? conditionType.slice(GATE_PREFIX.length) : undefined;
}

/** What the controller needs of a gated pod. */
export interface GatedPod {
  uid?: string;
  /** The Services whose gates the pod carries. */
  services: string[];
  /** The Services whose gate condition is already True. */
  open: string[];
  /** Every container passes its own readiness probe: only the gates hold the pod back. */
  containersReady: boolean;
}

export function gatedPod(pod: V1Pod): GatedPod | undefined {
  const services = (pod.spec?.readinessGates ?? [])
    .map((g) => serviceOfGate(g.conditionType))
    .filter((s): s is string => s !== undefined);
  if (!services.length) return undefined;
  const conditions = pod.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === "True");
  return {
    ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}),
    services,
    open: services.filter((s) => isTrue(gateType(s))),
    containersReady: isTrue("ContainersReady"),
  };
}

/** Whether the pod waits for this Service's gate alone: its containers are ready, the gate is not open. */
export function waitsForGate(pod: GatedPod | undefined, service: string): boolean {
  return !!pod && pod.containersReady && pod.services.includes(service) && !pod.open.includes(service);
}

/** A JSON Patch operation, as an admission webhook answers. */
export interface PatchOperation {
  op: "add";
  path: string;
  value: unknown;
}

/** A Service's selector picks pods as a label selector's matchLabels would; an empty one picks none (no endpoints). */
const selects = (svc: V1Service, labels: Record<string, string>) => {
  const selector = svc.spec?.selector;
  return (
    !!selector && Object.keys(selector).length > 0 && matchesLabelSelector({ matchLabels: selector }, labels)
  );
};

/**
 * The gates a new pod needs: one for each Service of its namespace that selects it and whose load balancer sends
 * traffic to pods (`sendsToPods`: served by Portico with pod targets), other than those it carries already.
 */
export function gatesFor(
  pod: V1Pod,
  services: readonly V1Service[],
  sendsToPods: (svc: V1Service) => boolean,
): string[] {
  const labels = pod.metadata?.labels ?? {};
  const present = new Set((pod.spec?.readinessGates ?? []).map((g) => g.conditionType));
  return services
    .filter((svc) => svc.spec?.type === "LoadBalancer" && selects(svc, labels) && sendsToPods(svc))
    .map((svc) => gateType(svc.metadata!.name!))
    .filter((type) => !present.has(type))
    .sort();
}

/** The admission webhook's patch adding `gates` to the pod, and the label that lets the controller watch it. */
export function injection(pod: V1Pod, gates: readonly string[]): PatchOperation[] {
  if (!gates.length) return [];
  const ops: PatchOperation[] = [];
  const existing = pod.spec?.readinessGates;
  if (existing?.length) {
    for (const type of gates)
      ops.push({ op: "add", path: "/spec/readinessGates/-", value: { conditionType: type } });
  } else {
    ops.push({
      op: "add",
      path: "/spec/readinessGates",
      value: gates.map((conditionType) => ({ conditionType })),
    });
  }
  if (!pod.metadata?.labels)
    ops.push({ op: "add", path: "/metadata/labels", value: { [GATED_POD_LABEL]: "true" } });
  else
    ops.push({
      op: "add",
      path: `/metadata/labels/${GATED_POD_LABEL.replace(/~/g, "~0").replace(/\//g, "~1")}`,
      value: "true",
    });
  return ops;
}
