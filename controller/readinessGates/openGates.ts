// Opens the readiness gates of a Service's pods that its load balancer reports healthy: the last step before
// such a pod is Ready. A gate is only ever opened: once the load balancer has found a pod healthy, its health
// is its own readiness probe's to judge (a gate that closed again on a failed check would take every pod out of
// the Service at once when the load balancer's checks fail for a reason of the load balancer's).
import type { CoreV1Api } from "@kubernetes/client-node";
import type { LoadBalancerIntent } from "../../providers/provider.ts";
import type { Logger } from "../../shared/log.ts";
import { strategicMergePatch } from "../../shared/patch.ts";
import { gateType } from "./gates.ts";

/** How soon to look again at targets whose pods wait for their gate (ELBv2 checks every 5–30 s). */
export const GATE_POLL_MS = 5_000;

export interface GateOutcome {
  opened: string[];
  /** Pods still waiting: the load balancer has not reported them healthy yet. */
  waiting: string[];
}

/**
 * `healthy`: the endpoint addresses the provider reports healthy (undefined when it cannot tell, so no gate
 * opens). Returns which pods' gates were opened and which still wait.
 */
export async function openGates(
  core: CoreV1Api,
  intent: LoadBalancerIntent,
  healthy: readonly string[] | undefined,
  log: Logger,
): Promise<GateOutcome> {
  const outcome: GateOutcome = { opened: [], waiting: [] };
  const healthyNow = new Set(healthy ?? []);
  const type = gateType(intent.service.name);
  for (const endpoint of intent.endpoints) {
    const pod = endpoint.awaitingGate;
    if (!pod) continue;
    if (!healthyNow.has(endpoint.ip)) {
      outcome.waiting.push(pod);
      continue;
    }
    const now = new Date().toISOString();
    try {
      await core.patchNamespacedPodStatus(
        {
          name: pod,
          namespace: intent.service.namespace,
          body: {
            status: {
              conditions: [
                {
                  type,
                  status: "True",
                  reason: "TargetHealthy",
                  message: `the load balancer of Service ${intent.service.name} reports ${endpoint.ip} healthy`,
                  lastProbeTime: now,
                  lastTransitionTime: now,
                },
              ],
            },
          },
        },
        strategicMergePatch,
      );
      outcome.opened.push(pod);
    } catch (err) {
      // Gone meanwhile (a 404) or not ours to write: the next look finds the slice changed.
      log.warn({ pod, err: (err as Error).message }, "could not open a pod's readiness gate");
      outcome.waiting.push(pod);
    }
  }
  return outcome;
}
