// What the AWS Load Balancer Controller's per-port and per-listener annotations make of the desired NLB: ALPN and
// attributes on the listener they name, attributes on one port's target group, and which ports they may name.
// Pure, like the desired load balancer (loadBalancer/desired.ts), which calls them.
import { ConfigurationError } from "../../errors.ts";
import type { PortIntent } from "../../provider.ts";
import { AWS_ANNOTATIONS, type AwsServiceSettings } from "../annotations/settings.ts";
import type { DesiredListener } from "../model.ts";
import { AWS_ANNOTATIONS as M } from "../annotations/settings.ts";

/** ALPN on TLS listeners, and `listener-attributes.<PROTOCOL>-<port>` on the listener it names. */
export function listenerExtras(listeners: DesiredListener[], settings: AwsServiceSettings): void {
  // (An ALPN policy with no TLS listener is refused as a combination.)
  if (settings.alpnPolicy)
    for (const l of listeners) if (l.protocol === "TLS") l.alpnPolicy = settings.alpnPolicy;
  for (const [which, attributes] of Object.entries(settings.listenerAttributes)) {
    const listener = listeners.find((l) => `${l.protocol}-${l.port}` === which);
    if (!listener)
      throw new ConfigurationError(
        "InvalidAnnotation",
        `metadata.annotations[${M.listenerAttributesPrefix}${which}]`,
        `the NLB has no ${which} listener`,
        `name one of ${listeners.map((l) => `${l.protocol}-${l.port}`).join(", ")}`,
      );
    listener.attributes = { ...attributes };
  }
}

/**
 * In the AWS Load Balancer Controller's order: the defaults, `target-group-attributes`, its `.<port>` form
 * (per key, an empty value keeping the unsuffixed one), `proxy-protocol-per-target-group`, and last
 * `proxy-protocol: "*"`.
 */
export function targetGroupAttributes(
  settings: AwsServiceSettings,
  port: number,
  defaults: Record<string, string>,
): Record<string, string> {
  const out = { ...defaults, ...settings.targetGroupAttributes };
  for (const [k, v] of Object.entries(settings.perPortTargetGroupAttributes[port] ?? {}))
    if (v !== "") out[k] = v;
  if (settings.proxyProtocolPorts)
    out["proxy_protocol_v2.enabled"] = String(settings.proxyProtocolPorts.includes(port));
  if (settings.proxyProtocolAll) out["proxy_protocol_v2.enabled"] = "true";
  return out;
}

/** TLS ports must be ports of the Service, by number or name: one it lacks would leave the certificate unused. */
export function checkTlsPorts(settings: AwsServiceSettings, ports: readonly PortIntent[]): void {
  for (const wanted of settings.sslPorts ?? []) {
    if (ports.some((p) => String(p.port) === wanted || (p.name !== "" && p.name === wanted))) continue;
    throw new ConfigurationError(
      "InvalidAnnotation",
      `metadata.annotations[${AWS_ANNOTATIONS.sslPorts}]`,
      `the Service has no port "${wanted}"`,
      `name its ports by number or name (${ports.map((p) => (p.name ? `${p.port}/${p.name}` : String(p.port))).join(", ")})`,
    );
  }
}

/** Per-port settings must name ports the Service has: a typo would otherwise do nothing. */
export function checkPortSettings(settings: AwsServiceSettings, ports: number[]): void {
  const named = [
    ...Object.keys(settings.perPortTargetGroupAttributes).map(
      (p) => [Number(p), `${M.targetGroupAttributesPrefix}${p}`] as const,
    ),
    ...(settings.proxyProtocolPorts ?? []).map((p) => [p, M.proxyProtocolPerTargetGroup] as const),
  ];
  for (const [port, annotation] of named) {
    if (!ports.includes(port))
      throw new ConfigurationError(
        "InvalidAnnotation",
        `metadata.annotations[${annotation}]`,
        `the Service has no port ${port}`,
        `name one of its ports (${ports.join(", ")})`,
      );
  }
}
