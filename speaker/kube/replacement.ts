// Whether this speaker's pod stops because its DaemonSet replaces it on the same node (a rolling update): then
// the speaker says `restarting` rather than leaving, and its addresses wait for the new pod (see
// membership/restartHolds.ts). Anything else — the pod deleted by hand, the DaemonSet deleted or no longer placing
// a pod on this node (daemonSetPlacement.ts), the node drained or shut down, a read that fails — is a departure: holding addresses for a replacement that may
// never come would cost more than moving them.
import type { V1DaemonSet, V1Node, V1Pod } from "@kubernetes/client-node";
import { leaving } from "../../shared/nodeEligibility.ts";
import { templatePlacesOn } from "./daemonSetPlacement.ts";
import type { KubeApi } from "./api/client.ts";

/** Set by the apiserver on a DaemonSet, bumped each time its pod template changes. */
export const TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation";
/** Set by the DaemonSet controller on each pod: the template generation it was made from. */
export const POD_TEMPLATE_GENERATION_LABEL = "pod-template-generation";

/** Why the pod is replaced in place, or undefined when its stop is a departure. Pure. */
export function replacedInPlace(
  pod: V1Pod,
  daemonSet: V1DaemonSet | undefined,
  node: V1Node | undefined,
): string | undefined {
  if (!daemonSet || daemonSet.metadata?.deletionTimestamp) return undefined;
  if (!node || leaving(node)) return undefined;
  const owner = pod.metadata?.ownerReferences?.find((o) => o.kind === "DaemonSet" && o.controller);
  if (!owner || owner.uid !== daemonSet.metadata?.uid) return undefined;
  const current = daemonSet.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  const mine = pod.metadata?.labels?.[POD_TEMPLATE_GENERATION_LABEL];
  if (current === undefined || mine === undefined || mine === current) return undefined;
  // The update may take the speaker off this node (a new nodeSelector or affinity): then nothing replaces it.
  if (!templatePlacesOn(daemonSet, node)) return undefined;
  return `DaemonSet ${daemonSet.metadata?.name} rolls from template generation ${mine} to ${current}`;
}

/** Reads this pod and its DaemonSet; undefined (a departure) when either read fails or takes over `timeoutMs`. */
export async function readReplacement(
  api: KubeApi,
  pod: { name: string; namespace: string },
  node: V1Node | undefined,
  timeoutMs = 2000,
): Promise<string | undefined> {
  const read = async () => {
    const self = await api.get<V1Pod>(`/api/v1/namespaces/${pod.namespace}/pods/${pod.name}`);
    const owner = self.metadata?.ownerReferences?.find((o) => o.kind === "DaemonSet" && o.controller);
    if (!owner) return undefined;
    const ds = await api.get<V1DaemonSet>(
      `/apis/apps/v1/namespaces/${pod.namespace}/daemonsets/${owner.name}`,
    );
    return replacedInPlace(self, ds, node);
  };
  const timeout = new Promise<undefined>((resolve) =>
    setTimeout(() => resolve(undefined), timeoutMs).unref(),
  );
  return Promise.race([read().catch(() => undefined), timeout]);
}
