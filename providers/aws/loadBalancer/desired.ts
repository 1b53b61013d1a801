// The desired NLB for a Service: a pure function of the provider-neutral intent, the Service's AWS settings and the
// network it lives in, put together from each resource's desired piece (listeners/desired.ts for the ports,
// targetGroups/desired.ts per listener, securityGroups/choice.ts for the groups). Everything the user must fix is a
// ConfigurationError.
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import { checkIntent } from "../checks.ts";
import type { DesiredListener, DesiredLoadBalancer, DesiredTargetGroup, Network } from "../model.ts";
import { protocolsOf } from "../listeners/desired.ts";
import { listenerExtras } from "../listeners/portSettings.ts";
import { securityGroupChoice } from "../securityGroups/choice.ts";
import { desiredSubnetMappings, immutableVariant } from "../network/subnetMappings.ts";
import { checkDualstackSubnets } from "../network/dualstackSubnets.ts";
import { loadBalancerName, ownershipTags, securityGroupName } from "../names.ts";
import { desiredTargetGroup } from "../targetGroups/desired.ts";

/**
 * ELBv2's own defaults for a new NLB: always desired (so a removed annotation puts the value back), and never sent
 * for a load balancer just made, which has them already.
 */
export const DEFAULT_LB_ATTRIBUTES: Readonly<Record<string, string>> = {
  "load_balancing.cross_zone.enabled": "false",
};

export function desiredLoadBalancer(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  network: Network,
  cluster: string,
): DesiredLoadBalancer {
  const svc = intent.service;
  const groups = checkIntent(intent, settings);
  checkDualstackSubnets(settings, network);
  const subnetMappings = desiredSubnetMappings(settings, network);
  const name =
    settings.name ??
    loadBalancerName(cluster, svc, settings.scheme, immutableVariant(settings, subnetMappings));
  // As the AWS Load Balancer Controller: a Service with an IPv6 family gets IPv6 target groups (a dualstack NLB's),
  // for instance targets too: on an IPv6 cluster kube-proxy serves node ports on the nodes' IPv6 addresses alone.
  // (A dualstack NLB: the combinations refuse an IPv6 family on an IPv4 one.)
  const ipv6 = intent.ipFamilies.includes("IPv6");
  const userTags = settings.additionalTags;
  const listeners: DesiredListener[] = [];
  const targetGroups: DesiredTargetGroup[] = [];
  for (const group of groups) {
    const { tls, listenerProtocol, tgProtocol } = protocolsOf(settings, group);
    const tg = desiredTargetGroup(intent, settings, {
      cluster,
      loadBalancer: name,
      network,
      group,
      listenerProtocol,
      protocol: tgProtocol,
      ipv6,
    });
    targetGroups.push(tg);
    listeners.push({
      port: group.ports[0]!.port,
      protocol: listenerProtocol,
      certificateArns: tls ? settings.certificateArns : [],
      ...(tls && settings.sslPolicy ? { sslPolicy: settings.sslPolicy } : {}),
      attributes: {},
      targetGroupName: tg.name,
    });
  }
  listenerExtras(listeners, settings);
  const securityGroups = securityGroupChoice(settings, intent, listeners, {
    name: securityGroupName(cluster, svc),
    description: `Portico: clients allowed to reach ${svc.namespace}/${svc.name}`,
    vpcId: network.vpcId,
    tags: { ...userTags, ...ownershipTags(cluster, svc, "securitygroup") },
  });
  return {
    name,
    ...(settings.name ? { nameFixed: true as const } : {}),
    scheme: settings.scheme,
    subnets: [...network.subnets].sort(),
    ipAddressType: settings.ipAddressType,
    attributes: { ...DEFAULT_LB_ATTRIBUTES, ...settings.loadBalancerAttributes },
    tags: { ...userTags, ...ownershipTags(cluster, svc, "loadbalancer") },
    ...(subnetMappings ? { subnetMappings } : {}),
    ...securityGroups,
    ...(settings.privateLinkInboundRules
      ? { privateLinkInboundRules: settings.privateLinkInboundRules }
      : {}),
    backendRules: [],
    listeners,
    targetGroups,
  };
}
