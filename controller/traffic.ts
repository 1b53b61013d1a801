// The Serving condition: whether traffic sent to a Service's load balancer reaches a backend, kept apart from
// LoadBalancerReady (which says the load balancer is made as asked). A load balancer with no target, or with
// every target failing its health check, is made but does not serve, and users must see that.
import type { TrafficState } from "../providers/provider.ts";
import type { EventType } from "../shared/events.ts";
import type { ConditionState } from "./status.ts";

/** The first look again while traffic does not flow (or is not known to); doubled each time up to the cap. */
export const TRAFFIC_POLL_FIRST_MS = 5_000;
export const TRAFFIC_POLL_MAX_MS = 5 * 60_000;

export function servingCondition(traffic: TrafficState): ConditionState {
  return {
    status: traffic.flowing === true ? "True" : traffic.flowing === false ? "False" : "Unknown",
    reason: traffic.reason,
    message: traffic.message,
  };
}

/**
 * The Event a change of the Serving condition deserves: a Warning when traffic stops reaching backends (or
 * never started), a Normal one when it recovers from that — also when the way back went through Unknown
 * (`wasDown`: new targets wait for their first health checks); none while it is unknown or unchanged.
 */
export function servingEvent(
  previous: { status?: string; reason?: string } | undefined,
  traffic: TrafficState,
  wasDown = false,
): { type: EventType; reason: string; message: string } | undefined {
  if (traffic.flowing === false && (previous?.status !== "False" || previous.reason !== traffic.reason))
    return { type: "Warning", reason: traffic.reason, message: traffic.message };
  if (traffic.flowing === true && (previous?.status === "False" || wasDown))
    return {
      type: "Normal",
      reason: traffic.reason,
      message: `Traffic reaches backends again: ${traffic.message}`,
    };
  return undefined;
}

/**
 * How long to wait before looking at the targets again: never while traffic flows (the resync and the watches
 * bring the Service back when something changes), nor while only the cluster can change the verdict (no ready
 * endpoint: a Service without pods would otherwise be looked at for ever, and after a restart every such Service
 * at the same moments, in waves that held users' changes up), and with exponential backoff otherwise, so targets
 * that take long to pass their checks cost a handful of calls, not a storm.
 */
export function trafficPollDelay(traffic: TrafficState, attempt: number): number | undefined {
  if (traffic.flowing === true || traffic.untilClusterChanges) return undefined;
  return Math.min(TRAFFIC_POLL_FIRST_MS * 2 ** attempt, TRAFFIC_POLL_MAX_MS);
}
