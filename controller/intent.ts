import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import { waitsForGate, type GatedPod } from "./readinessGates/gates.ts";
import { Address4, Address6 } from "ip-address";
import { TARGET_NODE_LABEL_ANNOTATIONS } from "../providers/annotationKeys/portico.ts";
import { refusalError } from "../providers/annotationKeys/review.ts";
import { ANNOTATIONS, providerForClass } from "../providers/registry.ts";
import { ConfigurationError } from "../providers/errors.ts";
import type {
  EndpointTarget,
  LoadBalancerIntent,
  NodeTarget,
  PortIntent,
  Protocol,
} from "../providers/provider.ts";
import { eligibleNodes } from "../shared/nodeEligibility.ts";
import { parseLabelSelector, type LabelMatcher } from "../shared/labelSelector.ts";
import { hostBits } from "../shared/range.ts";

const ZONE_LABEL = "topology.kubernetes.io/zone";

export const SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges";
/** Target-node selectors users already write for the AWS Load Balancer Controller, and Portico's own. */
export { TARGET_NODE_LABEL_ANNOTATIONS };
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

export interface IntentConfig {
  /** The controller-wide target-node selector, if any. */
  nodeSelector?: LabelMatcher;
  /** Labels of the Service's namespace (known when the controller watches namespaces). */
  namespaceLabels?: Record<string, string>;
  /** The gated pods the controller watches (readinessGates/), by namespace and name. */
  gatedPod?: (namespace: string, name: string) => GatedPod | undefined;
}

/**
 * The provider-neutral intent for one LoadBalancer Service: a pure function of the Service, the cluster's
 * Nodes and the Service's EndpointSlices. Throws ConfigurationError for what the user must fix.
 */
export function buildIntent(
  svc: V1Service,
  nodes: readonly V1Node[],
  slices: readonly V1EndpointSlice[],
  loadBalancerClass: string,
  config: IntentConfig = {},
): LoadBalancerIntent {
  const meta = svc.metadata!;
  const spec = svc.spec ?? {};
  const annotations = meta.annotations ?? {};
  const provider = providerForClass(loadBalancerClass)?.name;
  const review = provider ? ANNOTATIONS.review(annotations, provider) : { refused: [], noops: [] };
  const refusal = refusalError(review);
  if (refusal) throw refusal;
  const ports = servicePorts(svc);
  const selectors = [
    ...(config.nodeSelector ? [config.nodeSelector] : []),
    ...targetNodeSelectors(annotations),
  ];
  const gated = config.gatedPod;
  const { endpoints, drainingEndpoints } = endpointTargets(
    meta.name!,
    slices,
    gated
      ? (name, uid) => {
          const pod = gated(meta.namespace!, name);
          // A pod of the same name made since (a StatefulSet's) is another pod: the slice will say so soon.
          return (!uid || !pod?.uid || uid === pod.uid) && waitsForGate(pod, meta.name!);
        }
      : () => false,
  );
  return {
    service: { namespace: meta.namespace!, name: meta.name!, uid: meta.uid! },
    loadBalancerClass,
    annotations,
    acceptedNoops: review.noops.map((f) => `${f.key}: ${f.message}`),
    ports,
    externalTrafficPolicy: spec.externalTrafficPolicy === "Local" ? "Local" : "Cluster",
    ...(spec.healthCheckNodePort ? { healthCheckNodePort: spec.healthCheckNodePort } : {}),
    allocateNodePorts: spec.allocateLoadBalancerNodePorts !== false,
    nodes: nodeTargets(
      nodes,
      selectors,
      targetNodeSelectorKey(config.nodeSelector, annotations),
      spec.externalTrafficPolicy === "Local" ? "Local" : "Cluster",
    ),
    endpoints,
    drainingEndpoints,
    sourceRanges: sourceRanges(svc),
    ...(sourceRangesFromAnnotation(svc) ? { sourceRangesField: SOURCE_RANGES_FIELD_ANNOTATION } : {}),
    ipFamilies: (spec.ipFamilies ?? ["IPv4"]).filter(
      (f): f is "IPv4" | "IPv6" => f === "IPv4" || f === "IPv6",
    ),
    ipFamilyPolicy:
      (spec.ipFamilyPolicy as LoadBalancerIntent["ipFamilyPolicy"] | undefined) ?? "SingleStack",
    ...(spec.sessionAffinity === "ClientIP" ? { clientIPAffinity: true } : {}),
    ...(spec.loadBalancerIP ? { loadBalancerIP: spec.loadBalancerIP } : {}),
    ...(spec.selector ? { selector: spec.selector } : {}),
    serviceLabels: meta.labels ?? {},
    namespaceLabels: config.namespaceLabels ?? {},
  };
}

function servicePorts(svc: V1Service): PortIntent[] {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) {
    throw new ConfigurationError(
      "NoPorts",
      "spec.ports",
      "the Service has no ports",
      "add at least one port",
    );
  }
  return ports.map((p, i) => {
    const protocol = (p.protocol ?? "TCP") as Protocol;
    if (!["TCP", "UDP", "SCTP"].includes(protocol)) {
      throw new ConfigurationError(
        "UnsupportedProtocol",
        `spec.ports[${i}].protocol`,
        `unknown protocol ${protocol}`,
        "use TCP or UDP",
      );
    }
    return { name: p.name ?? "", protocol, port: p.port, ...(p.nodePort ? { nodePort: p.nodePort } : {}) };
  });
}

function targetNodeSelectors(annotations: Record<string, string>): LabelMatcher[] {
  return TARGET_NODE_LABEL_ANNOTATIONS.filter((a) => annotations[a]).map((a) => {
    try {
      return parseLabelSelector(annotations[a]!);
    } catch (err) {
      throw new ConfigurationError(
        "InvalidTargetNodeLabels",
        `metadata.annotations[${a}]`,
        (err as Error).message,
        'write a label selector such as "node-role=edge,zone in (a,b)"',
      );
    }
  });
}

/**
 * The nodes a Service's traffic may go to, as targets sorted by name. Every Service with the same selectors and
 * policy has the same ones: for a frozen Node list (the cache's, the same array until a Node changes) they are
 * worked out once per list rather than once per Service, and each node's target once per node object.
 */
function nodeTargets(
  nodes: readonly V1Node[],
  selectors: readonly LabelMatcher[],
  key: string,
  policy: "Cluster" | "Local",
): NodeTarget[] {
  const compute = () => eligibleNodes(nodes, selectors, policy).map(targetOf).sort(byName);
  if (!Object.isFrozen(nodes)) return compute();
  let known = TARGETS.get(nodes);
  if (!known) TARGETS.set(nodes, (known = new Map<string, readonly NodeTarget[]>()));
  const memoKey = `${policy}\n${key}`;
  let targets = known.get(memoKey);
  if (!targets) known.set(memoKey, (targets = Object.freeze(compute())));
  return targets as NodeTarget[];
}

const TARGETS = new WeakMap<readonly V1Node[], Map<string, readonly NodeTarget[]>>();
const TARGET_OF = new WeakMap<V1Node, NodeTarget>();
/** Stands for the controller-wide selector in the memo's key (there is one per process). */
const SELECTOR_IDS = new WeakMap<LabelMatcher, number>();
let nextSelectorId = 1;

/** What decides a Service's target nodes besides the nodes: the selectors, the Service's by their text. */
function targetNodeSelectorKey(
  controllerWide: LabelMatcher | undefined,
  annotations: Record<string, string>,
): string {
  let id = controllerWide ? SELECTOR_IDS.get(controllerWide) : 0;
  if (id === undefined) SELECTOR_IDS.set(controllerWide!, (id = nextSelectorId++));
  return JSON.stringify([id, TARGET_NODE_LABEL_ANNOTATIONS.map((a) => annotations[a] ?? null)]);
}

function targetOf(node: V1Node): NodeTarget {
  let target = TARGET_OF.get(node);
  if (!target) TARGET_OF.set(node, (target = Object.freeze(nodeTarget(node))));
  return target;
}

function nodeTarget(node: V1Node): NodeTarget {
  const internalIP = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
  const internalIPv6 = node.status?.addresses?.find(
    (a) => a.type === "InternalIP" && a.address.includes(":") && a.address !== internalIP,
  )?.address;
  const labels = node.metadata?.labels;
  const zone = labels?.[ZONE_LABEL];
  return {
    name: node.metadata!.name!,
    ...(node.spec?.providerID ? { providerID: node.spec.providerID } : {}),
    ...(internalIP ? { internalIP } : {}),
    ...(internalIPv6 ? { internalIPv6 } : {}),
    ...(zone ? { zone } : {}),
    ...(labels && Object.keys(labels).length ? { labels } : {}),
  };
}

/**
 * Ready endpoints receive traffic. Serving-but-terminating ones drain; like kube-proxy, they keep
 * receiving traffic only when no endpoint at all is ready, so a rolling update of a single replica does
 * not black-hole. Not-ready, non-serving endpoints are not targets — except a pod that waits only for this
 * Service's readiness gate (`awaitsGate`): it must be a target for the load balancer to find it healthy and
 * open the gate. Such a pod is no ready endpoint yet, so terminating ones keep their traffic beside it until
 * one is.
 */
function endpointTargets(
  service: string,
  slices: readonly V1EndpointSlice[],
  awaitsGate: (pod: string, uid: string | undefined) => boolean,
) {
  const ready = new Map<string, EndpointTarget>();
  const gated = new Map<string, EndpointTarget>();
  const terminating = new Map<string, EndpointTarget>();
  for (const slice of slices) {
    if (slice.metadata?.labels?.[SERVICE_NAME_LABEL] !== service) continue;
    if (slice.addressType !== "IPv4" && slice.addressType !== "IPv6") continue;
    const ports = Object.fromEntries(
      (slice.ports ?? []).filter((p) => p.port).map((p) => [p.name ?? "", p.port!]),
    );
    for (const ep of slice.endpoints ?? []) {
      const ip = ep.addresses[0];
      if (!ip) continue;
      // The API says an unset `ready` means ready, an unset `serving` follows `ready`.
      const isReady = ep.conditions?.ready ?? true;
      const serving = ep.conditions?.serving ?? isReady;
      const isTerminating = ep.conditions?.terminating ?? false;
      const target: EndpointTarget = {
        ip,
        ports,
        ...(ep.nodeName ? { nodeName: ep.nodeName } : {}),
        ...(ep.zone ? { zone: ep.zone } : {}),
      };
      const ref = ep.targetRef?.kind === "Pod" ? ep.targetRef : undefined;
      const pod = ref?.name;
      if (isReady && !isTerminating) ready.set(ip, target);
      else if (serving && isTerminating) terminating.set(ip, pod ? { ...target, pod } : target);
      else if (!isTerminating && pod && awaitsGate(pod, ref?.uid))
        gated.set(ip, { ...target, awaitingGate: pod });
    }
  }
  for (const ip of ready.keys()) {
    terminating.delete(ip);
    gated.delete(ip);
  }
  for (const ip of gated.keys()) terminating.delete(ip);
  const sorted = (...maps: Map<string, EndpointTarget>[]) =>
    maps.flatMap((m) => [...m.values()]).sort((a, b) => a.ip.localeCompare(b.ip));
  if (ready.size === 0) {
    // With nothing ready the terminating endpoints still serve: targets like any other, not draining ones.
    const serving = new Map([...terminating].map(([ip, { pod: _pod, ...target }]) => [ip, target]));
    return { endpoints: sorted(gated, serving), drainingEndpoints: [] };
  }
  return { endpoints: sorted(ready, gated), drainingEndpoints: sorted(terminating) };
}

const SOURCE_RANGES_FIELD_ANNOTATION = `metadata.annotations[${SOURCE_RANGES_ANNOTATION}]`;

/** The annotation gives the ranges only when the spec gives none (as Kubernetes' service controller reads them). */
function sourceRangesFromAnnotation(svc: V1Service): boolean {
  return (
    !svc.spec?.loadBalancerSourceRanges?.length && !!svc.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION]
  );
}

function sourceRanges(svc: V1Service): string[] {
  const fromSpec = svc.spec?.loadBalancerSourceRanges ?? [];
  const annotation = svc.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION];
  const [field, ranges] = sourceRangesFromAnnotation(svc)
    ? [SOURCE_RANGES_FIELD_ANNOTATION, annotation!.split(",")]
    : ["spec.loadBalancerSourceRanges", fromSpec];
  return ranges
    .map((r) => r.trim())
    .filter(Boolean)
    .map((range) => {
      const valid = range.includes("/") && (Address4.isValid(range) || Address6.isValid(range));
      if (!valid) {
        throw new ConfigurationError(
          "InvalidSourceRange",
          field,
          `"${range}" is not a CIDR`,
          'write CIDRs such as "203.0.113.0/24"',
        );
      }
      const host = hostBits(range);
      if (host) {
        throw new ConfigurationError(
          "InvalidSourceRange",
          field,
          `"${range}" has host bits set`,
          `write ${host.network} for the network, or ${host.single} for the one address`,
        );
      }
      return range;
    });
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
