// A rolling update as `kubectl rollout restart` makes one: the pod template gains an annotation, so every pod is
// replaced under the workload's update strategy. Shared by the rollout tests and the benchmark of changes.
import { AppsV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { mergePatch } from "../kube.ts";
import { waitFor } from "../wait.ts";

/**
 * Replaces every pod of a Deployment or DaemonSet and waits until the update is complete: every pod updated
 * and ready (available, for a Deployment), and no old pod still terminating (the status counts none of them).
 */
export async function rollOut(
  kc: KubeConfig,
  kind: "Deployment" | "DaemonSet",
  name: string,
  namespace: string,
  timeoutMs = 600_000,
): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  const body = {
    spec: { template: { metadata: { annotations: { "test.portico.io/restartedAt": `${Date.now()}` } } } },
  };
  const read = () =>
    kind === "Deployment"
      ? apps.readNamespacedDeployment({ name, namespace })
      : apps.readNamespacedDaemonSet({ name, namespace });
  const before = await read();
  if (kind === "Deployment") await apps.patchNamespacedDeployment({ name, namespace, body }, mergePatch);
  else await apps.patchNamespacedDaemonSet({ name, namespace, body }, mergePatch);
  await waitFor(
    `${kind} ${namespace}/${name} to be rolled out`,
    async () => {
      const o = await read();
      const s = o.status as Record<string, number>;
      const want =
        kind === "Deployment" ? (o.spec as { replicas: number }).replicas : s.desiredNumberScheduled!;
      const updated = kind === "Deployment" ? s.updatedReplicas : s.updatedNumberScheduled;
      const ready = kind === "Deployment" ? s.availableReplicas : s.numberReady;
      const total = kind === "Deployment" ? s.replicas : s.currentNumberScheduled;
      return (
        (o.metadata!.generation! > before.metadata!.generation! &&
          s.observedGeneration === o.metadata!.generation &&
          updated === want &&
          ready === want &&
          total === want) ||
        undefined
      );
    },
    { timeoutMs, intervalMs: 500 },
  );
  const selector = Object.entries((await read()).spec!.selector.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const core = kc.makeApiClient(CoreV1Api);
  await waitFor(
    `the old pods of ${kind} ${namespace}/${name} to be gone`,
    async () => {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
      return pods.items.every((p) => !p.metadata!.deletionTimestamp) || undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}
