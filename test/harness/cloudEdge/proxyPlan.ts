// The NLB listeners the kernel cannot carry, as pure functions: a TLS listener (the NLB ends the client's TLS
// with the listener's certificate, and opens plain TCP, or TLS again for a TLS target group, to the target) and
// a listener whose target group sends a proxy protocol v2 header ahead of the client's bytes. HAProxy carries
// them in the edge, bound to the NLB's address and port, connecting from the NLB's address to the same targets
// the kernel would pick (healthy ones, or all when all fail). Nothing here does I/O.
import { shortHash } from "./checkPlan.ts";
import type { EdgeListener, EdgeLoadBalancer, EdgeTargetGroup } from "./nlbModel.ts";

/** ELBv2's idle timeout for TCP flows (350 s), which the proxy keeps for the connections it carries. */
const IDLE_TIMEOUT_S = 350;

/**
 * Whether the listener needs the proxy: TLS, or proxy protocol v2 on its target group (which ELBv2 offers for TCP
 * and TLS target groups only, never UDP).
 */
export function proxied(listener: EdgeListener, group: EdgeTargetGroup): boolean {
  if (listener.protocol === "TLS") return true;
  return (
    listener.protocol === "TCP" &&
    (group.protocol === "TCP" || group.protocol === "TLS") &&
    group.attributes?.["proxy_protocol_v2.enabled"] === "true"
  );
}

export interface ProxiedListener {
  lb: EdgeLoadBalancer;
  listener: EdgeListener;
  group: EdgeTargetGroup;
  /** The targets to send new connections to (forwardedTargets). */
  targets: readonly { ip: string; port: number }[];
  /** For a TLS listener: the PEM file (certificate and key) of its certificate; undefined when unknown. */
  certificate?: string;
}

/**
 * HAProxy's configuration for the proxied listeners: one frontend per address and port, its backend the chosen
 * targets, round robin. A TLS listener whose certificate the edge does not hold is left out (its connections are
 * refused), as is nothing else: a listener with no target to send to accepts and closes, as an NLB resets.
 */
export function proxyConfig(listeners: readonly ProxiedListener[], files: { socket: string }): string {
  const lines = [
    "global",
    `  stats socket ${files.socket} mode 600 level admin`,
    "defaults",
    "  mode tcp",
    "  timeout connect 5s",
    `  timeout client ${IDLE_TIMEOUT_S}s`,
    `  timeout server ${IDLE_TIMEOUT_S}s`,
  ];
  const sorted = [...listeners].sort((a, b) =>
    `${a.lb.arn}|${a.listener.port}`.localeCompare(`${b.lb.arn}|${b.listener.port}`),
  );
  for (const p of sorted) {
    const tls = p.listener.protocol === "TLS";
    if (tls && !p.certificate) continue;
    const name = shortHash(`${p.lb.arn}|${p.listener.port}`);
    lines.push(`frontend l-${name}`);
    for (const address of p.lb.addresses)
      lines.push(`  bind ${address}:${p.listener.port}${tls ? ` ssl crt ${p.certificate}` : ""}`);
    lines.push(`  default_backend t-${name}`);
    lines.push(`backend t-${name}`, "  balance roundrobin");
    // Connections leave from the NLB's address (its first), as ELBv2 opens them from its own.
    if (p.lb.addresses[0]) lines.push(`  source ${p.lb.addresses[0]}`);
    const proxyV2 = p.group.attributes?.["proxy_protocol_v2.enabled"] === "true";
    const toTarget = [
      proxyV2 ? " send-proxy-v2" : "",
      p.group.protocol === "TLS" ? " ssl verify none" : "",
    ].join("");
    p.targets.forEach((t, i) => lines.push(`  server t${i} ${t.ip}:${t.port}${toTarget}`));
  }
  return lines.join("\n") + "\n";
}
