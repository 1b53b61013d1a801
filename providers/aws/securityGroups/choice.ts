// Which security groups the desired NLB wears, and what its own group lets in: pure, like loadBalancer/desired.ts, which calls it.
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { DesiredSecurityGroup, IngressRule, ListenerProtocol } from "../model.ts";

/** What a listener's rules depend on: its port, and TCP, UDP or both. */
type ListenerOf = { port: number; protocol: ListenerProtocol };

/**
 * Portico's own group (the default), the user's groups (`security-groups`: Portico makes none and changes none),
 * or none at all (`disable-nlb-sg`).
 */
export function securityGroupChoice(
  settings: AwsServiceSettings,
  intent: LoadBalancerIntent,
  listeners: readonly ListenerOf[],
  own: Omit<DesiredSecurityGroup, "ingress">,
): { securityGroup?: DesiredSecurityGroup; userSecurityGroups: string[] } {
  const ingress = ownGroupIngress(settings, intent, listeners);
  if (!ingress) return { userSecurityGroups: settings.disableNlbSg ? [] : settings.securityGroups };
  return { securityGroup: { ...own, ingress }, userSecurityGroups: [] };
}

/** The inbound rules of the group Portico makes for the NLB; undefined when it makes none. */
export function ownGroupIngress(
  settings: AwsServiceSettings,
  intent: LoadBalancerIntent,
  listeners: readonly ListenerOf[],
): IngressRule[] | undefined {
  if (settings.disableNlbSg) return undefined;
  // (Prefix lists with the user's own groups are refused as a combination.)
  if (settings.securityGroups.length) return undefined;
  return ingressRules(listeners, intent.sourceRanges, settings.ipAddressType, settings.prefixLists);
}

/** From the source ranges (everyone, without any), plus managed prefix lists, which replace "everyone". */
function ingressRules(
  listeners: readonly ListenerOf[],
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
