// What the cluster alone says about whether a load balancer's traffic can reach a pod, whatever the cloud reports
// of its targets. Every provider asks it before judging its own health checks: a cloud may call a target healthy
// (an emulator always does, a real NLB for a while after a change) while kube-proxy on it has nowhere to send the
// packet. Pure, provider-neutral.
import type { LoadBalancerIntent, TrafficState } from "./provider.ts";

/**
 * How a load balancer's packets reach the pods:
 * - `pods`: straight to endpoints (ip targets), or through a node the endpoints choose (bare metal announces
 *   only from such nodes);
 * - `nodes`: to these nodes' node ports (instance targets), where kube-proxy forwards them — to any ready endpoint
 *   with `Cluster`, only to one on the same node with `Local` (kube-proxy's health check fails elsewhere).
 */
export type TrafficPath = { kind: "pods" } | { kind: "nodes"; names: ReadonlySet<string> };

/** Why no traffic can reach a pod along `path`, or undefined when the endpoints allow it. */
export function endpointsBlock(intent: LoadBalancerIntent, path: TrafficPath): TrafficState | undefined {
  if (intent.endpoints.length === 0)
    return {
      flowing: false,
      reason: "NoReadyEndpoints",
      untilClusterChanges: true,
      message:
        "the Service has no ready endpoint, so no backend can pass its traffic on, whatever the load balancer's health checks say: check spec.selector and the pods' readiness",
    };
  if (path.kind === "pods" || intent.externalTrafficPolicy !== "Local") return undefined;
  // kube-proxy counts an endpoint as local only when its nodeName is the node's own name: one naming no node is
  // local nowhere.
  if (intent.endpoints.some((e) => e.nodeName !== undefined && path.names.has(e.nodeName))) return undefined;
  const elsewhere = [...new Set(intent.endpoints.map((e) => e.nodeName ?? "no node"))].sort();
  return {
    flowing: false,
    reason: "NoLocalEndpoints",
    untilClusterChanges: true,
    message: `externalTrafficPolicy Local: no target node holds a ready endpoint (they run on ${elsewhere.join(", ")}, which ${elsewhere.length === 1 ? "is not a target" : "are not targets"}), so every target fails kube-proxy's health check and drops the traffic: make those nodes eligible, or use externalTrafficPolicy Cluster`,
  };
}

/**
 * With `externalTrafficPolicy: Local`, the nodes whose every endpoint of the Service is terminating while others
 * elsewhere are ready: kube-proxy there still forwards to the draining pods, but its health check already fails,
 * and the cloud would notice only after its unhealthy threshold — longer than many pods drain. Node targets on
 * these nodes stop taking new connections at once (deregistered, or adminState Down) while open ones finish, as
 * terminating pods do behind ip targets. A node with no endpoint at all stays: it is failing its check anyway, and
 * a target kept registered is served as soon as a pod lands there (registration takes minutes on AWS).
 */
export function drainingNodes(intent: LoadBalancerIntent): ReadonlySet<string> {
  if (intent.externalTrafficPolicy !== "Local") return new Set();
  const serving = new Set(intent.endpoints.map((e) => e.nodeName));
  return new Set(
    intent.drainingEndpoints.flatMap((e) => (e.nodeName && !serving.has(e.nodeName) ? [e.nodeName] : [])),
  );
}
