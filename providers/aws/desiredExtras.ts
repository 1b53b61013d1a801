// Parts of the desired NLB that the AWS Load Balancer Controller's finer annotations shape: which security groups
// the NLB wears and what its own group lets in, per-listener ALPN and attributes, per-port target-group attributes.
// Pure, like desired.ts, which calls them.
import { ConfigurationError } from "../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../provider.ts";
import { AWS_ANNOTATIONS, type AwsServiceSettings } from "./annotations.ts";
import type { DesiredListener, DesiredSecurityGroup, IngressRule } from "./model.ts";
import { AWS_ANNOTATIONS as M } from "./annotations.ts";

/**
 * Portico's own group (the default), the user's groups (`security-groups`: Portico makes none and changes none),
 * or none at all (`disable-nlb-sg`).
 */
export function securityGroupChoice(
  settings: AwsServiceSettings,
  intent: LoadBalancerIntent,
  listeners: DesiredListener[],
  own: Omit<DesiredSecurityGroup, "ingress">,
): { securityGroup?: DesiredSecurityGroup; userSecurityGroups: string[] } {
  if (settings.disableNlbSg) return { userSecurityGroups: [] };
  // (Prefix lists with the user's own groups are refused as a combination.)
  if (settings.securityGroups.length) return { userSecurityGroups: settings.securityGroups };
  return {
    securityGroup: {
      ...own,
      ingress: ingressRules(listeners, intent.sourceRanges, settings.ipAddressType, settings.prefixLists),
    },
    userSecurityGroups: [],
  };
}

/** From the source ranges (everyone, without any), plus managed prefix lists, which replace "everyone". */
function ingressRules(
  listeners: DesiredListener[],
  sourceRanges: string[],
  ipAddressType: string,
  prefixLists: string[],
): IngressRule[] {
  const everyone = ipAddressType === "dualstack" ? ["0.0.0.0/0", "::/0"] : ["0.0.0.0/0"];
  const cidrs = [
    ...(sourceRanges.length ? sourceRanges : prefixLists.length ? [] : everyone),
    ...prefixLists,
  ];
  const rules: IngressRule[] = [];
  for (const l of listeners) {
    const protocols: IngressRule["protocol"][] =
      l.protocol === "TCP_UDP" ? ["tcp", "udp"] : l.protocol === "UDP" ? ["udp"] : ["tcp"];
    for (const protocol of protocols) for (const cidr of cidrs) rules.push({ protocol, port: l.port, cidr });
  }
  return rules;
}

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
