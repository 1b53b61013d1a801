// Pods behind a readiness gate, as a kubelet would report them: for tests of the controller opening gates
// without a real kubelet (the apiserver alone).
import type { V1Pod } from "@kubernetes/client-node";
import { GATED_POD_LABEL, gateType } from "../../controller/readinessGates/gates.ts";
import { mergePatch, type TestCluster } from "./kube.ts";
import { waitFor } from "./wait.ts";

/** A pod as a kubelet reports it: its containers' readiness and, for the gate, the gate's own condition. */
export async function gatedPodOn(
  cluster: TestCluster,
  name: string,
  node: string,
  ip: string,
  state: { containersReady: boolean; gateOpen: boolean },
  service = "web",
): Promise<V1Pod> {
  const pod = await cluster.core.createNamespacedPod({
    namespace: cluster.namespace,
    body: {
      metadata: { name, labels: { app: "web", [GATED_POD_LABEL]: "true" } },
      spec: {
        nodeName: node,
        containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }],
        readinessGates: [{ conditionType: gateType(service) }],
      },
    },
  });
  const now = new Date().toISOString();
  const status = (ok: boolean) => (ok ? "True" : "False");
  await cluster.core.patchNamespacedPodStatus(
    {
      name,
      namespace: cluster.namespace,
      body: {
        status: {
          phase: "Running",
          podIP: ip,
          podIPs: [{ ip }],
          conditions: [
            { type: "ContainersReady", status: status(state.containersReady), lastTransitionTime: now },
            {
              type: "Ready",
              status: status(state.containersReady && state.gateOpen),
              lastTransitionTime: now,
            },
            ...(state.gateOpen ? [{ type: gateType(service), status: "True", lastTransitionTime: now }] : []),
          ],
        },
      },
    },
    mergePatch,
  );
  return pod;
}

export async function gate(cluster: TestCluster, pod: string, service = "web") {
  const p = await cluster.core.readNamespacedPodStatus({ name: pod, namespace: cluster.namespace });
  return p.status?.conditions?.find((c) => c.type === gateType(service));
}

/** The gate's condition once it is True. */
export function gateOpened(cluster: TestCluster, what: string, pod: string, service = "web") {
  return waitFor(what, async () => {
    const c = await gate(cluster, pod, service);
    return c?.status === "True" ? c : undefined;
  });
}
