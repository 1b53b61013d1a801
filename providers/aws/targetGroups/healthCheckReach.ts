// Where a target group's health check connects, and whether anything there can answer it. Every NLB health check
// (TCP, HTTP, HTTPS) opens a TCP connection, so one aimed at a port the Service serves over UDP alone fails on every
// target: the target group reports them all unhealthy while the Service looks made. Judged on the parsed settings
// with the other settings that cannot work together (annotations/combinations.ts), before anything is made.
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { GroupProtocol } from "../model.ts";
import { KUBE_PROXY_HEALTH_PORT } from "./healthCheckDefaults.ts";

export interface ListenerPorts {
  port: number;
  protocol: GroupProtocol;
  /** The Service ports the listener serves (a TCP and a UDP port of one number share it). */
  names: readonly string[];
}

/** A listener whose health check connects where only UDP is served: which port, and why it is UDP's alone. */
export interface UdpOnlyCheck {
  listener: number;
  /** Where the check connects, for people: `node port 30053`, `target port of "dns"`. */
  where: string;
}

/**
 * The listeners whose health check, as the annotations aim it, connects over TCP to a port only UDP ports of the
 * Service serve. With instance targets the node port is kube-proxy's, which listens on it for the Service port's
 * own protocol alone: a check there by number, name or traffic-port cannot pass, unless it is the
 * healthCheckNodePort or kube-proxy's own health port, which answer HTTP. With ip targets a pod may serve TCP on any
 * port the Service does not list (a DNS server on both protocols of 53), so only a check aimed by name at a UDP
 * Service port, which no TCP port of the Service reaches, is known to fail.
 */
export function udpOnlyHealthChecks(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  listeners: readonly ListenerPorts[],
): UdpOnlyCheck[] {
  const aimed = settings.healthCheck.port;
  // Without a port named, the behaviour table's default: kube-proxy's HTTP for a UDP node port, which answers.
  if (aimed === undefined) return [];
  const found: UdpOnlyCheck[] = [];
  for (const l of listeners) {
    const where = settings.targetType === "instance" ? onNode(intent, l, aimed) : onPod(intent, aimed);
    if (where) found.push({ listener: l.port, where });
  }
  return found;
}

/** Instance targets: the node port the check reaches, when only UDP Service ports have it. */
function onNode(
  intent: LoadBalancerIntent,
  listener: ListenerPorts,
  aimed: number | string,
): string | undefined {
  const own = intent.ports.filter((p) => listener.names.includes(p.name));
  let nodePort: number | undefined;
  if (aimed === "traffic-port") nodePort = own[0]?.nodePort;
  else if (typeof aimed === "number") nodePort = aimed;
  else nodePort = intent.ports.find((p) => p.name === aimed)?.nodePort;
  // A name the Service lacks, or a port without a node port, is refused where the port is resolved (targetGroups/desired.ts).
  if (nodePort === undefined) return undefined;
  // kube-proxy answers HTTP on both, whatever the Service's protocols.
  if (nodePort === KUBE_PROXY_HEALTH_PORT || nodePort === intent.healthCheckNodePort) return undefined;
  const serving = intent.ports.filter((p) => p.nodePort === nodePort);
  if (!udpAlone(serving)) return undefined;
  return `node port ${nodePort}, which kube-proxy serves over UDP alone (${portNames(serving)})`;
}

/** ip targets: a check aimed by name at a UDP Service port that no TCP port of the Service reaches on the pods. */
function onPod(intent: LoadBalancerIntent, aimed: number | string): string | undefined {
  if (typeof aimed === "number" || aimed === "traffic-port") return undefined;
  const named = intent.ports.find((p) => p.name === aimed);
  if (!named || named.protocol !== "UDP") return undefined;
  const reached = (p: PortIntent) =>
    intent.endpoints.some((e) => e.ports[p.name] !== undefined && e.ports[p.name] === e.ports[named.name]);
  const tcpToo = intent.ports.some((p) => p.protocol === "TCP" && (p.port === named.port || reached(p)));
  if (tcpToo) return undefined;
  return `the target port of "${named.name}", which the Service serves over UDP alone (none of its TCP ports reaches it)`;
}

const udpAlone = (ports: readonly PortIntent[]) =>
  ports.length > 0 && ports.every((p) => p.protocol === "UDP");
const portNames = (ports: readonly PortIntent[]) =>
  ports.map((p) => (p.name ? `"${p.name}"` : String(p.port))).join(", ");
