// What the controller's informers keep of each object: the fields Portico reads, nothing else. A Node carries its
// container images, capacities and attached volumes (often tens of kilobytes), every object its managedFields;
// kept for thousands of objects they are most of the cached data. Trimmed in place, before any other handler
// sees the object, since the cache keeps the object its handlers get; lists are trimmed a page at a time as they
// arrive (pagedList.ts). Trimming is idempotent: an object trimmed twice is the object trimmed once. Nothing
// trimmed is ever written back: the controller changes objects by merge patches of the fields it owns, never by
// replacing them. Each field kept names its readers, so a new reader knows to keep what it reads.
import type {
  KubernetesObject,
  V1EndpointSlice,
  V1Namespace,
  V1Node,
  V1ObjectMeta,
  V1Pod,
  V1Service,
} from "@kubernetes/client-node";
import { GATE_PREFIX } from "../readinessGates/gates.ts";

/**
 * kubectl apply's copy of the whole object as last applied: often the largest annotation a Service has, and no
 * reader's (the spec itself is read and compared, controller/manager.ts).
 */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Of the metadata of Nodes, EndpointSlices and Namespaces: the key (name, namespace), uid and resourceVersion
 * (the list-watch's own bookkeeping), labels (node selectors, eligibility, the slice's Service, pool namespace
 * selectors) and deletionTimestamp (eligibility). Not annotations, owners, creation time or generation.
 */
function keptMetadata(m: V1ObjectMeta): V1ObjectMeta {
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
    ...(m.uid !== undefined ? { uid: m.uid } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(m.labels !== undefined ? { labels: m.labels } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
  };
}

function trimMetadata(obj: KubernetesObject): void {
  if (obj.metadata) obj.metadata = keptMetadata(obj.metadata);
}

/**
 * Services: all but managedFields and kubectl's last-applied copy. Annotations (settings of every provider, the
 * annotation review, sharing keys), finalizers, creation time (the bare-metal allocator's order), spec and status
 * are all read.
 */
export function trimService(svc: V1Service): void {
  const m = svc.metadata;
  if (!m) return;
  delete m.managedFields;
  if (m.annotations && LAST_APPLIED_ANNOTATION in m.annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...rest } = m.annotations;
    m.annotations = rest;
  }
}

/**
 * Nodes: labels, taints, cordoning and providerID, the Ready condition's status (shared/nodeEligibility.ts) and the addresses
 * (targets, the bare-metal inventory); not images, capacities, volumes, daemon endpoints, system info, other
 * conditions or annotations.
 */
export function trimNode(node: V1Node): void {
  trimMetadata(node);
  if (node.spec) {
    node.spec = {
      ...(node.spec.providerID !== undefined ? { providerID: node.spec.providerID } : {}),
      ...(node.spec.taints !== undefined ? { taints: node.spec.taints } : {}),
      ...(node.spec.unschedulable !== undefined ? { unschedulable: node.spec.unschedulable } : {}),
    };
  }
  const s = node.status;
  if (s) {
    node.status = {
      ...(s.conditions !== undefined
        ? {
            conditions: s.conditions
              .filter((c) => c.type === "Ready")
              .map((c) => ({ type: c.type, status: c.status })),
          }
        : {}),
      ...(s.addresses !== undefined ? { addresses: s.addresses } : {}),
    };
  }
}

/** EndpointSlices: the address type, the ports, and each endpoint's addresses, conditions, node, zone and pod. */
export function trimEndpointSlice(slice: V1EndpointSlice): void {
  trimMetadata(slice);
  slice.endpoints = slice.endpoints?.map((e) => ({
    addresses: e.addresses,
    ...(e.conditions !== undefined ? { conditions: e.conditions } : {}),
    ...(e.nodeName ? { nodeName: e.nodeName } : {}),
    ...(e.zone ? { zone: e.zone } : {}),
    // The pod's name and uid: a readiness gate's pod is found by them (controller/readinessGates/).
    ...(e.targetRef?.kind === "Pod" && e.targetRef.name
      ? {
          targetRef: {
            kind: "Pod",
            name: e.targetRef.name,
            ...(e.targetRef.uid ? { uid: e.targetRef.uid } : {}),
          },
        }
      : {}),
  }));
}

/** Namespaces: their labels (pools and Azure's load balancer placement select Services by them). */
export function trimNamespace(ns: V1Namespace): void {
  trimMetadata(ns);
  delete ns.spec;
  delete ns.status;
}

/**
 * Gated pods (readinessGates/): the key, the readiness gates, and the conditions a gate's state is read from
 * (ContainersReady and the gates' own). Not the containers, volumes, labels or anything else of the pod.
 */
export function trimPod(pod: V1Pod): void {
  trimMetadata(pod);
  if (pod.metadata) delete pod.metadata.labels;
  pod.spec = {
    containers: [],
    ...(pod.spec?.readinessGates ? { readinessGates: pod.spec.readinessGates } : {}),
  };
  const conditions = pod.status?.conditions;
  pod.status = conditions
    ? {
        conditions: conditions
          .filter((c) => c.type === "ContainersReady" || c.type.startsWith(GATE_PREFIX))
          .map((c) => ({ type: c.type, status: c.status })),
      }
    : {};
}
