// A Service's ports as an NLB's listeners: one listener per port number (a TCP and a UDP port with the same number
// share a TCP_UDP listener), TLS where a certificate ends it. Pure; the target groups and the checks read the same
// grouping, so a port is judged and built the same way everywhere.
import { ConfigurationError } from "../../errors.ts";
import type { PortIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { GroupProtocol, ListenerProtocol } from "../model.ts";

/** The Service's ports one listener serves. */
export interface PortGroup {
  protocol: GroupProtocol;
  ports: PortIntent[];
}

/** One listener per port number; a TCP and a UDP port with the same number share a TCP_UDP listener. */
export function groupPorts(ports: PortIntent[]): PortGroup[] {
  const byNumber = new Map<number, PortIntent[]>();
  ports.forEach((p, i) => {
    if (p.protocol === "SCTP") {
      throw new ConfigurationError(
        "UnsupportedProtocol",
        `spec.ports[${i}].protocol`,
        "an NLB cannot serve SCTP",
        "use TCP or UDP",
      );
    }
    byNumber.set(p.port, [...(byNumber.get(p.port) ?? []), p]);
  });
  return [...byNumber.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, group]) => ({
      protocol: group.length > 1 ? "TCP_UDP" : (group[0]!.protocol as "TCP" | "UDP"),
      ports: group,
    }));
}

/** A listener's protocol and its target group's: TLS where a certificate ends it, and to the targets with backend-protocol ssl. */
export function protocolsOf(settings: AwsServiceSettings, group: PortGroup) {
  const tls =
    settings.certificateArns.length > 0 && group.protocol === "TCP" && tlsPort(settings, group.ports[0]!);
  const listenerProtocol: ListenerProtocol = tls ? "TLS" : group.protocol;
  const tgProtocol: ListenerProtocol = tls && settings.backendTls ? "TLS" : group.protocol;
  return { tls, listenerProtocol, tgProtocol };
}

function tlsPort(settings: AwsServiceSettings, port: PortIntent): boolean {
  return (
    !settings.sslPorts ||
    settings.sslPorts.includes(String(port.port)) ||
    settings.sslPorts.includes(port.name)
  );
}
