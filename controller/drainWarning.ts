// A Warning when a load balancer drains a stopping pod's connections for longer than the pod is given to stop
// (`terminationGracePeriodSeconds`): the connections still open when the pod exits are cut, whatever the
// deregistration delay promises. ELBv2 drains for 300 s by default and Kubernetes gives a pod 30 s, so this is
// the common case behind NLB ip targets: the user is told once per Service and pair of figures, with both
// settings named. The pod's grace is read when it is seen draining (one read per stopping pod; the controller
// keeps no pods), from `metadata.deletionGracePeriodSeconds`, which is what the kubelet gives it.
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import type { LoadBalancerIntent, Notice, PodDrain } from "../providers/provider.ts";

export const DRAIN_WARNING = "DrainOutlastsPod";

/** The Warning, when the pod is given less time to stop than the load balancer drains. Pure. */
export function drainWarning(drain: PodDrain, pod: string, graceSeconds: number): Notice | undefined {
  if (graceSeconds >= drain.seconds) return undefined;
  return {
    type: "Warning",
    reason: DRAIN_WARNING,
    message:
      `pod ${pod} is given ${graceSeconds} s to stop (terminationGracePeriodSeconds) while the load balancer ` +
      `drains its connections for ${drain.seconds} s (${drain.setting}): connections still open when a pod ` +
      `exits are cut. Give the pods at least ${drain.seconds} s and keep them serving through it (e.g. a ` +
      `preStop sleep), or lower the delay to what the pods are given.`,
  };
}

/** The grace period a stopping pod was given (its spec's, or Kubernetes' default, before it is deleted). */
export function graceOf(pod: V1Pod): number {
  return pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

export class DrainWarnings {
  /** Per Service uid: the draining pods already read, and the last figures warned about. */
  private readonly seen = new Map<string, { pods: Set<string>; warned?: string }>();
  private readonly core: CoreV1Api;

  constructor(core: CoreV1Api) {
    this.core = core;
  }

  /** The Warning to record for this pass, if a newly draining pod is given less time than `drain`. */
  async check(intent: LoadBalancerIntent, drain: PodDrain | undefined): Promise<Notice | undefined> {
    const uid = intent.service.uid;
    const pods = intent.drainingEndpoints.flatMap((e) => (e.pod ? [e.pod] : []));
    if (!drain || !pods.length) {
      if (!drain) this.seen.delete(uid);
      return undefined;
    }
    const seen = this.seen.get(uid) ?? { pods: new Set<string>() };
    this.seen.set(uid, seen);
    // Only the pods draining now are kept: the set stays as small as a rollout's step.
    for (const pod of seen.pods) if (!pods.includes(pod)) seen.pods.delete(pod);
    for (const pod of pods) {
      if (seen.pods.has(pod)) continue;
      seen.pods.add(pod);
      const read = await this.core
        .readNamespacedPod({ name: pod, namespace: intent.service.namespace })
        .catch(() => undefined);
      if (!read) continue;
      const grace = graceOf(read);
      const warning = drainWarning(drain, pod, grace);
      const figures = `${grace}/${drain.seconds}`;
      if (warning && seen.warned !== figures) {
        seen.warned = figures;
        return warning;
      }
    }
    return undefined;
  }

  forget(uid: string): void {
    this.seen.delete(uid);
  }
}
