// A listener's target group, desired: its protocol and port (the node port for instance targets, the pods' port for
// ip targets), its health check, its attributes and the targets it holds. Pure.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import { drainingNodes } from "../../endpointTraffic.ts";
import { AWS_ANNOTATIONS, type AwsServiceSettings } from "../annotations/settings.ts";
import type { DesiredTargetGroup, ListenerProtocol, Network, Target } from "../model.ts";
import { targetGroupAttributes } from "../listeners/portSettings.ts";
import type { PortGroup } from "../listeners/desired.ts";
import { checkSettings } from "../checks.ts";
import { instanceIdFromProviderID, ownershipTags, targetGroupName } from "../names.ts";
import { healthCheck } from "./healthCheck.ts";

export const TARGETS_PER_TARGET_GROUP = 1000;

/**
 * ELBv2's own defaults for a new target group: always desired (so a removed annotation puts the value back), and
 * never sent for a group just made, which has them already.
 */
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

/** What names a target group besides its own settings: the NLB it serves and the listener it is for. */
export interface TargetGroupPlace {
  cluster: string;
  loadBalancer: string;
  network: Network;
  group: PortGroup;
  listenerProtocol: ListenerProtocol;
  protocol: ListenerProtocol;
  /** As the AWS Load Balancer Controller: a Service with an IPv6 family gets IPv6 target groups. */
  ipv6: boolean;
}

export function desiredTargetGroup(
  intent: LoadBalancerIntent,
  settings: AwsServiceSettings,
  place: TargetGroupPlace,
): DesiredTargetGroup {
  const svc = intent.service;
  const { group, protocol, ipv6 } = place;
  const port = group.ports[0]!;
  const tgPort = settings.targetType === "instance" ? nodePortOf(group.ports) : port.port;
  const name = targetGroupName(svc, {
    loadBalancer: place.loadBalancer,
    protocol,
    port: tgPort,
    targetType: settings.targetType,
    vpcId: place.network.vpcId,
    listenerPort: port.port,
    ...(ipv6 ? { ipAddressType: "ipv6" } : {}),
  });
  const targets =
    settings.targetType === "instance"
      ? instanceTargets(intent, tgPort)
      : ipTargets(intent, group.ports, ipv6);
  if (targets.length > TARGETS_PER_TARGET_GROUP) {
    throw new ConfigurationError(
      "TooManyTargets",
      settings.targetType === "instance"
        ? `metadata.annotations[${AWS_ANNOTATIONS.targetType}]`
        : "spec.selector",
      `${targets.length} targets exceed the ${TARGETS_PER_TARGET_GROUP} a target group allows`,
      "narrow the target nodes (annotation service.beta.kubernetes.io/aws-load-balancer-target-node-labels) or use ip targets",
    );
  }
  return {
    name,
    protocol,
    port: tgPort,
    targetType: settings.targetType,
    ...(ipv6 ? { ipAddressType: "ipv6" as const } : {}),
    vpcId: place.network.vpcId,
    healthCheck: healthCheck(intent, settings, group.protocol),
    attributes: targetGroupAttributes(settings, port.port, {
      ...DEFAULT_TG_ATTRIBUTES,
      ...(intent.clientIPAffinity && protocol !== "TLS" ? CLIENT_IP_AFFINITY : {}),
    }),
    targets,
    tags: {
      ...settings.additionalTags,
      ...ownershipTags(place.cluster, svc, "targetgroup"),
      "portico.io/listener": `${place.listenerProtocol}:${port.port}`,
    },
  };
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
