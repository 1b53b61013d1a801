// What one Service should have in ARM: a pure function of the provider-neutral intent, the Service's Azure
// settings, the cluster's network and configuration, and the public IP chosen for it. Everything the user
// must fix is a ConfigurationError, raised before any call is made.
import { TARGET_NODE_LABEL_ANNOTATIONS } from "../../annotationKeys/portico.ts";
import { AZURE_COMBINATIONS } from "../annotations/combinations.ts";
import { assertNoCombination } from "../../annotationKeys/combinations.ts";
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent, PortIntent } from "../../provider.ts";
import { drainingNodes } from "../../endpointTraffic.ts";
import { AZURE_ANNOTATIONS, type AzureServiceSettings } from "../annotations/settings.ts";
import { resourceGroups, type AzureConfig } from "../config.ts";
import { resourceId } from "../arm/ids.ts";
import type {
  BackendAddress,
  DesiredService,
  FrontendSpec,
  Network,
  PoolSpec,
  ProbeSpec,
  PublicIpChoice,
  RuleSpec,
} from "../model.ts";
import {
  clusterDigest,
  frontendName,
  nodePoolName,
  type IpFamily,
  ownershipTags,
  ruleName,
  serviceLoadBalancerName,
  sharedLoadBalancerName,
  TAG,
} from "../names.ts";
import { probeFor } from "../loadBalancer/probes.ts";
import { assertAccessCoherent } from "../annotations/access.ts";
import { assertPortKeysNamePorts } from "../annotations/portKeys.ts";
import { floatingIPField, serviceFields, sourceRangesField } from "../annotations/fields.ts";
import { inPrefix, securityRules } from "../security/rules.ts";
import { isOfFamily } from "../annotations/ipFamilies.ts";

/** Per-Service node selectors: a Service that narrows its nodes cannot share the cluster's node pool. */
export const TARGET_NODE_ANNOTATIONS = TARGET_NODE_LABEL_ANNOTATIONS;
/** ARM's default TCP idle timeout. */
const DEFAULT_IDLE_TIMEOUT_MINUTES = 4;

export interface DesiredContext {
  cluster: string;
  config: AzureConfig;
  network: Network;
  /** The public IP chosen for a public Service (see publicIps/choice.ts); undefined for internal ones. */
  publicIp?: PublicIpChoice;
  /** The side of the Service being described (annotations/ipFamilies.ts); IPv4 when not said. */
  family?: IpFamily;
  /**
   * The configured load balancer the Service is placed on (placement/), with several; otherwise the cluster's
   * (loadBalancerName, or the cluster name).
   */
  loadBalancerBase?: string;
}

export function desiredService(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  ctx: DesiredContext,
): DesiredService {
  const svc = intent.service;
  const { config, network, cluster } = ctx;
  const family = ctx.family ?? "IPv4";
  const targetType = chooseTargetType(intent, settings, config.floatingIPDefault ?? false);
  // Floating IP is off unless asked for (cloud-provider-azure has it on unless disabled). Off, the rules send
  // to node ports, which every dataplane serves; on, each node must accept packets for the frontend's address,
  // which kube-proxy does but not every replacement of it, and changing the default would rewrite the rules of
  // every existing Portico Service. Clusters moving over from cloud-provider-azure set floatingIPDefault to keep
  // what they had. The default applies where floating IP can work, to instance targets; only an explicit
  // annotation makes an ip-target Service refuse it.
  const floatingIP =
    settings.floatingIP ?? (targetType === "instance" && (config.floatingIPDefault ?? false));
  assertAccessCoherent(settings, intent.sourceRanges, sourceRangesField(intent));
  const fe = frontendName(svc.uid, family);
  const perService = config.loadBalancerPerService ?? false;
  const lbName = perService
    ? serviceLoadBalancerName(cluster, svc.uid, settings.internal)
    : sharedLoadBalancerName(ctx.loadBalancerBase ?? config.loadBalancerName ?? cluster, settings.internal);
  const groups = resourceGroups(config);
  const lbId = resourceId(config.subscriptionId, groups.loadBalancers, "loadBalancers", lbName);

  assertPortKeysNamePorts(intent.annotations, intent.ports);
  const ports = intent.ports.filter((p) => !settings.ports[p.port]?.noRule);
  ports.forEach((p) => {
    if (p.protocol === "SCTP")
      throw new ConfigurationError(
        "UnsupportedProtocol",
        `spec.ports[${intent.ports.indexOf(p)}].protocol`,
        "Portico's Azure load balancers serve TCP and UDP, not SCTP",
        "use TCP or UDP",
      );
  });
  const sharedPool =
    targetType === "instance" && !perService && !TARGET_NODE_ANNOTATIONS.some((a) => intent.annotations[a]);
  const pool: PoolSpec = {
    name: sharedPool ? nodePoolName(family) : fe,
    shared: sharedPool,
    addresses:
      targetType === "instance"
        ? nodeAddresses(intent, network, family, !sharedPool)
        : podAddresses(intent, network, family),
  };
  // Every Service port, with or without a rule: a probe may name one that has none (an istio status port).
  const backendPorts = new Map(
    intent.ports
      .filter((p) => p.protocol !== "SCTP")
      .map((p) => [p, backendPort(p, intent, floatingIP, targetType)]),
  );
  const probes: ProbeSpec[] = [];
  const probeOfPort: { port: number; protocol?: ProbeSpec["protocol"] }[] = [];
  const rules: RuleSpec[] = [];
  for (const port of ports) {
    const name = ruleName(fe, port.protocol as "TCP" | "UDP", port.port);
    const back = backendPorts.get(port)!;
    const probe = probeFor({ intent, settings, targetType, port, backendPort: back, backendPorts, name });
    if (probe) probes.push(probe);
    probeOfPort.push({ port: port.port, ...(probe ? { protocol: probe.protocol } : {}) });
    rules.push({
      name,
      protocol: port.protocol === "UDP" ? "Udp" : "Tcp",
      frontendPort: port.port,
      backendPort: back,
      ...(probe ? { probe: probe.name } : {}),
      floatingIP,
      loadDistribution: intent.clientIPAffinity ? "SourceIP" : "Default",
      ...(port.protocol === "TCP"
        ? {
            idleTimeoutInMinutes: settings.idleTimeoutMinutes ?? DEFAULT_IDLE_TIMEOUT_MINUTES,
            tcpReset: settings.tcpReset,
          }
        : {}),
    });
  }
  // Settings valid one by one that cannot work together, judged on the probes just chosen.
  assertNoCombination(AZURE_COMBINATIONS, {
    intent,
    settings,
    config,
    probes: probeOfPort,
  });
  assertDistinctBackendPorts(rules);
  const frontend = frontendSpec(settings, ctx, family);
  const recorded = !perService && ctx.publicIp?.kind !== "managed";
  const desired: DesiredService = {
    service: svc,
    family,
    cluster,
    location: config.location,
    vnetId: network.vnetId,
    loadBalancer: {
      name: lbName,
      resourceGroup: groups.loadBalancers,
      id: lbId,
      internal: settings.internal,
      perService,
      tags: perService
        ? ownershipTags(cluster, svc, "loadbalancer")
        : { [TAG.cluster]: cluster, [TAG.resource]: "loadbalancer" },
    },
    frontendName: fe,
    frontend,
    pool,
    probes,
    rules,
    recordOnLoadBalancer: recorded,
    securityRuleDescription: description(cluster, svc),
    fields: serviceFields(intent, settings, family, recorded),
  };
  if (ctx.publicIp) desired.publicIp = ctx.publicIp;
  const restricted = intent.sourceRanges.length || settings.allowedIpRanges.length;
  if (config.securityGroupName && !settings.disableSecurityRules)
    desired.securityRules = securityRules(intent, settings, rules, pool, network, family);
  else if (!config.securityGroupName && (restricted || settings.allowedServiceTags.length))
    throw new ConfigurationError(
      "SourceRangesUnsupported",
      intent.sourceRanges.length
        ? sourceRangesField(intent)
        : `metadata.annotations[${settings.allowedIpRanges.length ? AZURE_ANNOTATIONS.allowedIpRanges : AZURE_ANNOTATIONS.allowedServiceTags}]`,
      "the controller has no network security group to enforce source restrictions in",
      "set securityGroupName in the controller's Azure config, or remove the restriction",
    );
  return desired;
}

export function chooseTargetType(
  intent: LoadBalancerIntent,
  settings: AzureServiceSettings,
  floatingDefault: boolean,
): "instance" | "ip" {
  const targetType = settings.targetType ?? (intent.allocateNodePorts ? "instance" : "ip");
  // With floating IP a node receives traffic on the Service port itself (kube-proxy owns the frontend
  // address), so instance targets work without node ports; otherwise they cannot.
  if (targetType === "instance" && !intent.allocateNodePorts && !(settings.floatingIP ?? floatingDefault))
    throw new ConfigurationError(
      "NodePortsDisabled",
      "spec.allocateLoadBalancerNodePorts",
      "instance targets need node ports, and this Service has allocateLoadBalancerNodePorts: false",
      `use ip targets (annotation ${AZURE_ANNOTATIONS.targetType}: ip), floating IP ` +
        `(${AZURE_ANNOTATIONS.floatingIP}: "true") or allow node ports`,
    );
  if (targetType === "ip" && settings.floatingIP)
    throw new ConfigurationError(
      "FloatingIPNeedsNodes",
      floatingIPField(intent) ?? `metadata.annotations[${AZURE_ANNOTATIONS.floatingIP}]`,
      "with floating IP the backend must own the frontend address, which pods do not",
      `use instance targets (${AZURE_ANNOTATIONS.targetType}: instance) or turn floating IP off`,
    );
  return targetType;
}

function backendPort(
  port: PortIntent,
  intent: LoadBalancerIntent,
  floatingIP: boolean,
  targetType: "instance" | "ip",
): number {
  if (floatingIP) return port.port;
  if (targetType === "instance") return port.nodePort!;
  // A rule has one backend port: the target port most endpoints resolve the Service port to. Until there are
  // endpoints the Service port stands in; the pool is empty then, so no traffic goes anywhere.
  const counts = new Map<number, number>();
  for (const ep of intent.endpoints) {
    const resolved = ep.ports[port.name];
    if (resolved !== undefined) counts.set(resolved, (counts.get(resolved) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort(([a, x], [b, y]) => y - x || a - b)[0];
  return best?.[0] ?? port.port;
}

function assertDistinctBackendPorts(rules: RuleSpec[]): void {
  const seen = new Map<string, RuleSpec>();
  for (const rule of rules) {
    if (rule.floatingIP) continue;
    const key = `${rule.protocol}/${rule.backendPort}`;
    const other = seen.get(key);
    if (other)
      throw new ConfigurationError(
        "BackendPortClash",
        "spec.ports",
        `ports ${other.frontendPort} and ${rule.frontendPort} both reach ${rule.protocol} port ${rule.backendPort} ` +
          "on the same backends, which an Azure load balancer refuses",
        "give them different target ports, or use floating IP",
      );
    seen.set(key, rule);
  }
}

function frontendSpec(settings: AzureServiceSettings, ctx: DesiredContext, family: IpFamily): FrontendSpec {
  if (!settings.internal) {
    if (!ctx.publicIp) throw new Error("a public Service needs a public IP chosen before its desired state");
    return { kind: "public", publicIpId: ctx.publicIp.id };
  }
  const subnetName = settings.internalSubnet ?? ctx.config.subnetName;
  const subnet = ctx.network.subnets[subnetName.toLowerCase()];
  const field = settings.internalSubnet
    ? `metadata.annotations[${AZURE_ANNOTATIONS.internalSubnet}]`
    : "subnetName (controller Azure config)";
  if (!subnet)
    throw new ConfigurationError(
      "SubnetNotFound",
      field,
      `virtual network ${ctx.config.vnetName} has no subnet ${subnetName}`,
      `name one of ${Object.keys(ctx.network.subnets).join(", ") || "its subnets"}`,
    );
  // ARM takes a private frontend's address from the subnet's range of the frontend's family.
  if (!subnet.addressPrefixes.some((prefix) => isOfFamily(prefix, family)))
    throw new ConfigurationError(
      "SubnetHasNoRangeOfFamily",
      field,
      `subnet ${subnetName} has no ${family} range (${subnet.addressPrefixes.join(", ")}), so it cannot hold the Service's ${family} frontend`,
      `add an ${family} address prefix to the subnet, name a dual-stack subnet, or drop ${family} from spec.ipFamilies`,
    );
  const requested = settings.requestedAddress;
  const v6 = family === "IPv6" ? { family } : {};
  if (!requested) return { kind: "internal", subnetId: subnet.id, ...v6 };
  if (!subnet.addressPrefixes.some((prefix) => inPrefix(requested.address, prefix)))
    throw new ConfigurationError(
      "AddressNotInSubnet",
      requested.field,
      `${requested.address} is not in subnet ${subnetName} (${subnet.addressPrefixes.join(", ")})`,
      "ask for an address of the subnet, or name the subnet it belongs to",
    );
  return { kind: "internal", subnetId: subnet.id, privateIp: requested.address, ...v6 };
}

/**
 * The nodes' addresses; with `ownPool`, a Local Service's nodes whose endpoints all drain are held without new
 * connections (the shared pool serves every Service alike, so there its probe alone takes such a node out).
 */
function nodeAddresses(
  intent: LoadBalancerIntent,
  network: Network,
  family: IpFamily,
  ownPool: boolean,
): BackendAddress[] {
  const byIp = new Map<string, BackendAddress>();
  const draining = ownPool ? drainingNodes(intent) : new Set<string>();
  for (const node of intent.nodes) {
    const ip = [node.internalIP, node.internalIPv6].find((a) => a !== undefined && isOfFamily(a, family));
    if (!ip || !inNetwork(ip, network) || byIp.has(ip)) continue;
    byIp.set(ip, {
      name: node.name,
      ip,
      ...(draining.has(node.name) ? { adminState: "Down" as const } : {}),
    });
  }
  return [...byIp.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function podAddresses(intent: LoadBalancerIntent, network: Network, family: IpFamily): BackendAddress[] {
  const byIp = new Map<string, BackendAddress>();
  // A dual-stack Service's EndpointSlices hold each family's pod addresses; each side takes its own.
  const endpoints = intent.endpoints.filter((ep) => isOfFamily(ep.ip, family));
  for (const ep of endpoints) if (inNetwork(ep.ip, network)) byIp.set(ep.ip, { name: ep.ip, ip: ep.ip });
  for (const ep of intent.drainingEndpoints)
    if (isOfFamily(ep.ip, family) && inNetwork(ep.ip, network) && !byIp.has(ep.ip))
      byIp.set(ep.ip, { name: ep.ip, ip: ep.ip, adminState: "Down" });
  if (byIp.size === 0 && endpoints.length > 0)
    throw new ConfigurationError(
      "PodsOutsideVirtualNetwork",
      // Pods are targets by the annotation, or by default when the Service has no node ports.
      intent.annotations[AZURE_ANNOTATIONS.targetType]?.trim()
        ? `metadata.annotations[${AZURE_ANNOTATIONS.targetType}]`
        : "spec.allocateLoadBalancerNodePorts",
      `no endpoint address (${endpoints[0]!.ip}, ...) is in the virtual network, so pods cannot be targets`,
      "use instance targets, or a network plugin that gives pods VNet addresses (Azure CNI)",
    );
  return [...byIp.values()].sort((a, b) => a.ip.localeCompare(b.ip, undefined, { numeric: true }));
}

/** `portico:<cluster digest>:<namespace>/<name>`, within the 140 characters ARM allows. */
function description(cluster: string, svc: { namespace: string; name: string }): string {
  const full = `portico:${clusterDigest(cluster)}:${svc.namespace}/${svc.name}`;
  return full.length <= 140 ? full : `portico:${clusterDigest(cluster)}`;
}

function inNetwork(ip: string, network: Network): boolean {
  return network.addressPrefixes.some((prefix) => inPrefix(ip, prefix));
}
