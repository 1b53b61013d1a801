// The desired NLB for a Service: a pure function of the provider-neutral intent, the Service's AWS
// settings and the network it lives in. Everything the user must fix is a ConfigurationError.
import { ConfigurationError } from "../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../provider.ts";
import { drainingNodes } from "../endpointTraffic.ts";
import { AWS_ANNOTATIONS, type AwsServiceSettings } from "./annotations/settings.ts";
import type {
  DesiredListener,
  DesiredLoadBalancer,
  DesiredTargetGroup,
  ListenerProtocol,
  Network,
  Target,
} from "./model.ts";
import {
  checkPortSettings,
  checkTlsPorts,
  listenerExtras,
  targetGroupAttributes,
} from "./listeners/portSettings.ts";
import { checkAttributesByProtocol } from "./listeners/attributesByProtocol.ts";
import { ownGroupIngress, securityGroupChoice } from "./securityGroups/choice.ts";
import { checkOwnGroupRules } from "./securityGroups/ruleLimit.ts";
import type { GroupProtocol } from "./healthCheckDefaults.ts";
import { healthCheck } from "./targetGroupHealthCheck.ts";
import { AWS_COMBINATIONS } from "./annotations/combinations.ts";
import { assertNoCombination } from "../annotationKeys/combinations.ts";
import { desiredSubnetMappings, immutableVariant } from "./network/subnetMappings.ts";
import { checkDualstackSubnets } from "./network/dualstackSubnets.ts";
import {
  instanceIdFromProviderID,
  loadBalancerName,
  ownershipTags,
  securityGroupName,
  targetGroupName,
} from "./names.ts";

export const LIMITS = { listenersPerLoadBalancer: 50, targetsPerTargetGroup: 1000 } as const;

/** Attributes Portico manages, with the values AWS starts from, so removing an annotation restores them. */
/**
 * ELBv2's own defaults for a new NLB and target group: always desired (so a removed annotation puts the value
 * back), and never sent for a group or load balancer just made, which has them already.
 */
export const DEFAULT_LB_ATTRIBUTES: Readonly<Record<string, string>> = {
  "load_balancing.cross_zone.enabled": "false",
};
export const DEFAULT_TG_ATTRIBUTES: Readonly<Record<string, string>> = {
  "deregistration_delay.timeout_seconds": "300",
  "proxy_protocol_v2.enabled": "false",
  "stickiness.enabled": "false",
};
/**
 * `sessionAffinity: ClientIP`: an NLB keeps a client on one target by source IP. ELBv2 refuses stickiness on TLS
 * target groups, so those go without (the user's own target-group attributes win either way).
 */
const CLIENT_IP_AFFINITY = { "stickiness.enabled": "true", "stickiness.type": "source_ip" };

export type { Network } from "./model.ts";

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
  // (A dualstack NLB: the combinations above refuse an IPv6 family on an IPv4 one.)
  const ipv6 = intent.ipFamilies.includes("IPv6");
  const userTags = settings.additionalTags;
  const listeners: DesiredListener[] = [];
  const targetGroups: DesiredTargetGroup[] = [];
  for (const group of groups) {
    const { tls, listenerProtocol, tgProtocol } = protocolsOf(settings, group);
    const port = group.ports[0]!;
    const tgPort = settings.targetType === "instance" ? nodePortOf(group.ports) : port.port;
    const tgName = targetGroupName(svc, {
      loadBalancer: name,
      protocol: tgProtocol,
      port: tgPort,
      targetType: settings.targetType,
      vpcId: network.vpcId,
      listenerPort: port.port,
      ...(ipv6 ? { ipAddressType: "ipv6" } : {}),
    });
    const targets =
      settings.targetType === "instance"
        ? instanceTargets(intent, tgPort)
        : ipTargets(intent, group.ports, ipv6);
    if (targets.length > LIMITS.targetsPerTargetGroup) {
      throw new ConfigurationError(
        "TooManyTargets",
        settings.targetType === "instance"
          ? `metadata.annotations[${AWS_ANNOTATIONS.targetType}]`
          : "spec.selector",
        `${targets.length} targets exceed the ${LIMITS.targetsPerTargetGroup} a target group allows`,
        "narrow the target nodes (annotation service.beta.kubernetes.io/aws-load-balancer-target-node-labels) or use ip targets",
      );
    }
    targetGroups.push({
      name: tgName,
      protocol: tgProtocol,
      port: tgPort,
      targetType: settings.targetType,
      ...(ipv6 ? { ipAddressType: "ipv6" as const } : {}),
      vpcId: network.vpcId,
      healthCheck: healthCheck(intent, settings, group.protocol),
      attributes: targetGroupAttributes(settings, port.port, {
        ...DEFAULT_TG_ATTRIBUTES,
        ...(intent.clientIPAffinity && tgProtocol !== "TLS" ? CLIENT_IP_AFFINITY : {}),
      }),
      targets,
      tags: {
        ...userTags,
        ...ownershipTags(cluster, svc, "targetgroup"),
        "portico.io/listener": `${listenerProtocol}:${port.port}`,
      },
    });
    listeners.push({
      port: port.port,
      protocol: listenerProtocol,
      certificateArns: tls ? settings.certificateArns : [],
      ...(tls && settings.sslPolicy ? { sslPolicy: settings.sslPolicy } : {}),
      attributes: {},
      targetGroupName: tgName,
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

/**
 * Everything about the Service that can be refused without asking the cloud: its settings together, the number of
 * listeners, the ports its per-port annotations name, the attribute values its ports' protocols rule out, and the
 * inbound rules its NLB's own group would need (prefix lists are weighed once read, in build.ts). A pass runs it
 * before its first read; the listeners it returns are the NLB's.
 */
export function checkIntent(intent: LoadBalancerIntent, settings: AwsServiceSettings): PortGroup[] {
  const groups = checkSettings(intent, settings);
  if (groups.length > LIMITS.listenersPerLoadBalancer) {
    throw new ConfigurationError(
      "TooManyListeners",
      "spec.ports",
      `${groups.length} listeners are needed and an NLB allows ${LIMITS.listenersPerLoadBalancer}`,
      "split the ports over several Services",
    );
  }
  checkPortSettings(
    settings,
    groups.map((g) => g.ports[0]!.port),
  );
  checkTlsPorts(settings, intent.ports);
  checkAttributesByProtocol(
    settings,
    groups.map((g) => ({ port: g.ports[0]!.port, protocol: protocolsOf(settings, g).tgProtocol })),
  );
  const ingress = ownGroupIngress(
    settings,
    intent,
    groups.map((g) => ({ port: g.ports[0]!.port, protocol: g.protocol })),
  );
  if (ingress) checkOwnGroupRules(intent, ingress, settings.rulesPerSecurityGroup);
  return groups;
}

/**
 * The Service's listeners, once its settings are known to work together (the combinations table): what ensure, plan
 * and doctor all refuse, before anything is derived from the settings.
 */
export function checkSettings(intent: LoadBalancerIntent, settings: AwsServiceSettings): PortGroup[] {
  const groups = groupPorts(intent.ports);
  assertNoCombination(AWS_COMBINATIONS, {
    intent,
    settings,
    listeners: groups.map((g) => ({
      port: g.ports[0]!.port,
      protocol: g.protocol,
      names: g.ports.map((p) => p.name),
    })),
  });
  return groups;
}

interface PortGroup {
  protocol: GroupProtocol;
  ports: PortIntent[];
}

/** One listener per port number; a TCP and a UDP port with the same number share a TCP_UDP listener. */
function groupPorts(ports: PortIntent[]): PortGroup[] {
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
function protocolsOf(settings: AwsServiceSettings, group: PortGroup) {
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

function nodePortOf(ports: PortIntent[]): number {
  const nodePorts = new Set(ports.map((p) => p.nodePort));
  const nodePort = ports[0]!.nodePort;
  if (!nodePort) {
    throw new ConfigurationError(
      "NodePortMissing",
      "spec.ports",
      `port ${ports[0]!.port} has no nodePort`,
      "allocate node ports or use ip targets",
    );
  }
  if (nodePorts.size > 1) {
    throw new ConfigurationError(
      "NodePortMismatch",
      "spec.ports",
      `TCP and UDP port ${nodePort} have different nodePorts, and one TCP_UDP listener needs one`,
      "give both the same nodePort or use ip targets",
    );
  }
  return nodePort;
}

/** The IDs (instances or pod IPs) the Service's target groups hold: what their own security groups are read for. */
export function targetIds(intent: LoadBalancerIntent, settings: AwsServiceSettings): string[] {
  // Draining nodes count: their open connections still need the ingress their security groups allow.
  if (settings.targetType === "instance") return nodeTargets(intent.nodes, 0).map((t) => t.id);
  const ipv6 = intent.ipFamilies.includes("IPv6");
  const groups = checkSettings(intent, settings);
  return [...new Set(groups.flatMap((g) => ipTargets(intent, g.ports, ipv6).map((t) => t.id)))];
}

/** The nodes' instances, but those draining the Service's last connections (`drainingNodes`). */
function instanceTargets(intent: LoadBalancerIntent, port: number): Target[] {
  const draining = drainingNodes(intent);
  return nodeTargets(
    intent.nodes.filter((n) => !draining.has(n.name)),
    port,
  );
}

function nodeTargets(nodes: LoadBalancerIntent["nodes"], port: number): Target[] {
  return nodes
    .map((n) => instanceIdFromProviderID(n.providerID))
    .filter((id): id is string => id !== undefined)
    .map((id) => ({ id, port }))
    .sort(byTarget);
}

function ipTargets(intent: LoadBalancerIntent, ports: PortIntent[], ipv6: boolean): Target[] {
  const targets: Target[] = [];
  for (const ep of intent.endpoints) {
    const resolved = ports.map((p) => ep.ports[p.name]);
    const port = resolved[0];
    // A TCP_UDP target group registers one port per target, so both protocols must land on the same one.
    if (port === undefined || resolved.some((r) => r !== port)) continue;
    // A target group holds one family.
    if (ep.ip.includes(":") !== ipv6) continue;
    targets.push({ id: ep.ip, port });
  }
  return targets.sort(byTarget);
}

const byTarget = (a: Target, b: Target) => a.id.localeCompare(b.id) || a.port - b.port;
