// Which security groups the desired NLB wears, and what its own group lets in: pure, like desired.ts, which calls it.
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { DesiredListener, DesiredSecurityGroup, IngressRule } from "../model.ts";

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
