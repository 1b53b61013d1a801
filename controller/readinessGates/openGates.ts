// Opens the readiness gates of a Service's pods: those its load balancer reports healthy (the last step before
// such a pod is Ready), and every one when there is nothing to wait for — the load balancer sends to nodes, or
// does not say how pods fare, or the Service is gone or no LoadBalancer any more (a gate nobody opens would keep
// its pod unready for ever).
// A gate is only ever opened: once the load balancer has found a pod healthy, its health is its own readiness
// probe's to judge (a gate that closed again on a failed check would take every pod out of the Service at once
// when the load balancer's checks fail for a reason of the load balancer's).
import type { CoreV1Api } from "@kubernetes/client-node";
import type { LoadBalancerIntent } from "../../providers/provider.ts";
import type { Logger } from "../../shared/log.ts";
import { strategicMergePatch } from "../../shared/patch.ts";
import { gateType } from "./gates.ts";

/** How soon to look again at targets whose pods wait for their gate (ELBv2 checks every 5–30 s). */
export const GATE_POLL_MS = 5_000;

/** Told of each gate opened, with its reason (the controller's metrics count them). */
export type GateListener = (reason: string) => void;

export interface GateOutcome {
  opened: string[];
  /** Pods still waiting: the load balancer has not reported them healthy yet. */
  waiting: string[];
}

/**
 * `healthy`: the endpoint addresses the provider reports healthy behind a load balancer that sends to pods;
 * undefined when it sends to nodes, so no pod's gate has anything to wait for.
 */
export async function openGates(
  core: CoreV1Api,
  intent: LoadBalancerIntent,
  healthy: readonly string[] | undefined,
  log: Logger,
  opened?: GateListener,
): Promise<GateOutcome> {
  const outcome: GateOutcome = { opened: [], waiting: [] };
  const healthyNow = new Set(healthy ?? []);
  const { namespace, name } = intent.service;
  for (const endpoint of intent.endpoints) {
    const pod = endpoint.awaitingGate;
    if (!pod) continue;
    const why = !healthy
      ? {
          reason: "NoPodHealth",
          message: `the load balancer of Service ${name} sends to nodes, or does not say how pods fare: nothing to wait for`,
        }
      : healthyNow.has(endpoint.ip)
        ? {
            reason: "TargetHealthy",
            message: `the load balancer of Service ${name} reports ${endpoint.ip} healthy`,
          }
        : undefined;
    if (why && (await openGate(core, namespace, pod, name, why, log))) {
      outcome.opened.push(pod);
      opened?.(why.reason);
    } else outcome.waiting.push(pod);
  }
  return outcome;
}

/** Opens the gates of pods waiting for a Service that is gone or no LoadBalancer any more. */
export async function releaseGates(
  core: CoreV1Api,
  namespace: string,
  service: string,
  pods: readonly string[],
  log: Logger,
  opened?: GateListener,
): Promise<void> {
  const why = {
    reason: "NoLoadBalancer",
    message: `Service ${service} has no load balancer to wait for`,
  };
  for (const pod of pods) if (await openGate(core, namespace, pod, service, why, log)) opened?.(why.reason);
}

async function openGate(
  core: CoreV1Api,
  namespace: string,
  pod: string,
  service: string,
  why: { reason: string; message: string },
  log: Logger,
): Promise<boolean> {
  const now = new Date().toISOString();
  try {
    await core.patchNamespacedPodStatus(
      {
        name: pod,
        namespace,
        body: {
          status: {
            conditions: [
              {
                type: gateType(service),
                status: "True",
                ...why,
                lastProbeTime: now,
                lastTransitionTime: now,
              },
            ],
          },
        },
      },
      strategicMergePatch,
    );
    return true;
  } catch (err) {
    // Gone meanwhile (a 404) or not ours to write: the next look finds the slice changed.
    log.warn({ pod, err: (err as Error).message }, "could not open a pod's readiness gate");
    return false;
  }
}
