// Azure's idle timeout on load-balancing rules, as pure functions: a TCP flow through a rule that carries no packet
// in either direction for the rule's `idleTimeoutInMinutes` is forgotten by the load balancer. With the rule's
// `enableTcpReset`, a packet of the forgotten flow is answered with a reset (Azure sends its reset at the timeout
// itself, to both ends; the edge's comes when the next packet does, so an application that only waits to read
// learns of it later than on Azure); without it, the packet is dropped in silence and the client times out.
//
// The edge tells idle time from connection tracking: it sets the namespace's timeout for established TCP flows to
// ESTABLISHED_TIMEOUT_S, and every packet restarts a flow's countdown, so what has run down is the flow's idle time.
// Azure's minutes are scaled (IDLE_MINUTE_MS) so that tests wait seconds, as the NLB's registration delay is.
// Nothing here does I/O.
import type { AzureEdgeRule } from "./azurePlan.ts";

/** How long one of Azure's idle-timeout minutes lasts on the edge. */
export const IDLE_MINUTE_MS = 1_000;

/** The edge's timeout for established TCP flows: longer than Azure's longest idle timeout (100 minutes). */
export const ESTABLISHED_TIMEOUT_S = 7_200;

/** A tracked TCP flow, by its original direction (what `conntrack -D` needs to remove it). */
export interface TrackedFlow {
  src: string;
  sport: string;
  dst: string;
  dport: string;
  /** Seconds since its last packet. */
  idleSeconds: number;
}

/** The established TCP flows in `conntrack -L` output, with their idle time. */
export function establishedFlows(conntrack: string): TrackedFlow[] {
  const out: TrackedFlow[] = [];
  for (const line of conntrack.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== "tcp" || fields[3] !== "ESTABLISHED") continue;
    const first = (name: string) => fields.find((f) => f.startsWith(`${name}=`))?.slice(name.length + 1);
    const [src, sport, dst, dport] = [first("src"), first("sport"), first("dst"), first("dport")];
    const remaining = Number(fields[2]);
    if (!src || !sport || !dst || !dport || !Number.isFinite(remaining)) continue;
    out.push({ src, sport, dst, dport, idleSeconds: ESTABLISHED_TIMEOUT_S - remaining });
  }
  return out;
}

/** The TCP rule a flow came in by: its frontend address and port (any port for HA-ports rules). */
function ruleOf(flow: TrackedFlow, rules: readonly AzureEdgeRule[]): AzureEdgeRule | undefined {
  return rules.find(
    (r) =>
      r.protocol !== "Udp" &&
      r.frontend === flow.dst &&
      (r.frontendPort === 0 || String(r.frontendPort) === flow.dport),
  );
}

/** The flows through a rule that have been idle for its timeout: the edge forgets them. */
export function idleFlows(
  flows: readonly TrackedFlow[],
  rules: readonly AzureEdgeRule[],
  minuteMs = IDLE_MINUTE_MS,
): TrackedFlow[] {
  return flows.filter((f) => {
    const rule = ruleOf(f, rules);
    return rule !== undefined && f.idleSeconds * 1000 >= rule.idleTimeoutMinutes * minuteMs;
  });
}

/** The mark of a packet the edge answers with a reset, routed to the edge itself (azureEdge.ts). */
export const RESET_MARK = "0x2000";

/**
 * The mangle table's rules for packets of flows the edge no longer tracks, to a rule's frontend: where the rule
 * sends a reset, marked so that the edge takes the packet for itself and answers it (IDLE_FILTER); where it does
 * not, dropped.
 */
export function idleMangleRules(rules: readonly AzureEdgeRule[]): string[] {
  const out: string[] = [];
  for (const r of [...rules].sort((a, b) => a.id.localeCompare(b.id))) {
    if (r.protocol === "Udp") continue;
    const verdict = r.tcpReset ? `MARK --set-mark ${RESET_MARK}` : "DROP";
    out.push(
      `-A AZ-IDLE -d ${r.frontend}/32 -p tcp${r.frontendPort ? ` --dport ${r.frontendPort}` : ""} -j ${verdict}`,
    );
  }
  return [":AZ-IDLE - [0:0]", "-A PREROUTING -m conntrack --ctstate INVALID -j AZ-IDLE", ...out];
}

/** The filter table's answer to a marked packet: the reset. */
export const IDLE_FILTER = [`-A INPUT -m mark --mark ${RESET_MARK} -p tcp -j REJECT --reject-with tcp-reset`];
