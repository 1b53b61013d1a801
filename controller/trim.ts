// What the controller's informers keep of each object: the fields Portico reads, nothing else. A Node carries its
// container images, capacities and attached volumes (often tens of kilobytes), every object its managedFields;
// kept for thousands of objects they are most of the controller's memory. Trimmed in place, before any other
// handler sees the object, since the cache keeps the object its handlers get. Nothing trimmed is ever written
// back: the controller changes objects by merge patches of the fields it owns, never by replacing them.
import type {
  KubernetesObject,
  V1EndpointSlice,
  V1Namespace,
  V1Node,
  V1Service,
} from "@kubernetes/client-node";

function trimMetadata(obj: KubernetesObject, keepAnnotations: boolean): void {
  const m = obj.metadata;
  if (!m) return;
  delete m.managedFields;
  if (!keepAnnotations) delete m.annotations;
}

/** Services: all but managedFields (annotations, spec and status are all read). */
export function trimService(svc: V1Service): void {
  trimMetadata(svc, true);
}

/**
 * Nodes: labels, taints and providerID, the Ready condition's status and the addresses; not images, capacities,
 * volumes, daemon endpoints, system info or annotations.
 */
export function trimNode(node: V1Node): void {
  trimMetadata(node, false);
  if (node.spec) node.spec = { providerID: node.spec.providerID, taints: node.spec.taints };
  const s = node.status;
  if (s) {
    node.status = {
      conditions: s.conditions?.map((c) => ({ type: c.type, status: c.status })),
      addresses: s.addresses,
    };
  }
}

/** EndpointSlices: each endpoint's addresses, conditions, node and zone, and the ports. */
export function trimEndpointSlice(slice: V1EndpointSlice): void {
  trimMetadata(slice, false);
  slice.endpoints = slice.endpoints?.map((e) => ({
    addresses: e.addresses,
    conditions: e.conditions,
    ...(e.nodeName ? { nodeName: e.nodeName } : {}),
    ...(e.zone ? { zone: e.zone } : {}),
  }));
}

/** Namespaces: their labels (pools select Services by them). */
export function trimNamespace(ns: V1Namespace): void {
  trimMetadata(ns, false);
  delete ns.spec;
  delete ns.status;
}
