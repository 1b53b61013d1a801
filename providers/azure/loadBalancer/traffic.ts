// Whether a Service's Azure load balancer rules can carry traffic. ARM tells a member's probe result only through
// a long-running operation per rule (read for readiness gates, ruleHealth.ts), too dear for every pass, so
// this is judged from what decides the probes: the backend pool's live members, and the cluster's endpoints —
// with instance backends and `Local`, only nodes holding a ready endpoint pass kube-proxy's health check; with
// `Cluster`, any node forwards, but only if some endpoint is ready; ip backends are ready endpoints themselves.
import { endpointsBlock } from "../../endpointTraffic.ts";
import type { LoadBalancerIntent, TrafficState } from "../../provider.ts";
import type { DesiredService } from "../model.ts";

export function azureTraffic(
  intent: LoadBalancerIntent,
  desired: DesiredService,
  targetType: "instance" | "ip",
): TrafficState {
  if (desired.rules.length === 0)
    return {
      flowing: false,
      reason: "NoRules",
      message: "no port has a load-balancing rule (every port is marked port_N_no_lb_rule)",
    };
  const live = desired.pool.addresses.filter((a) => a.adminState !== "Down");
  if (live.length === 0)
    return {
      flowing: false,
      reason: "NoBackends",
      message: `the backend pool has no member: ${targetType === "ip" ? "no ready endpoint" : "no eligible node"} — see porticoctl doctor`,
    };
  const nodeByIp = new Map(
    intent.nodes.flatMap((n) => [n.internalIP, n.internalIPv6].map((ip) => [ip, n.name] as const)),
  );
  const liveNodes = new Set(live.map((a) => nodeByIp.get(a.ip)).filter((n): n is string => n !== undefined));
  const blocked = endpointsBlock(
    intent,
    targetType === "ip" ? { kind: "pods" } : { kind: "nodes", names: liveNodes },
  );
  if (blocked) return blocked;
  let passing = live.length;
  if (targetType === "instance" && intent.externalTrafficPolicy === "Local") {
    const withEndpoint = new Set(intent.endpoints.map((e) => e.nodeName).filter(Boolean));
    passing = live.filter((a) => withEndpoint.has(nodeByIp.get(a.ip))).length;
  }
  return {
    flowing: true,
    reason: "BackendsReady",
    message: `${passing} of ${live.length} backends should pass their probes (judged from the cluster's endpoints)`,
  };
}

/** A dual-stack Service serves when both families do; the first family that does not is told. */
export function trafficOfSides(
  intent: LoadBalancerIntent,
  sides: { desired: DesiredService }[],
  targetType: "instance" | "ip",
): TrafficState {
  const states = sides.map(({ desired }) => ({
    family: desired.family,
    state: azureTraffic(intent, desired, targetType),
  }));
  const failing = states.find((s) => s.state.flowing !== true);
  if (sides.length === 1 || !failing) return states[0]!.state;
  return { ...failing.state, message: `${failing.family}: ${failing.state.message}` };
}
