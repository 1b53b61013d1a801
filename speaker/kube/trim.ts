// What the speaker's list-watches keep of each object: what the speaker reads, nothing else. Every speaker holds
// every Service, EndpointSlice and Node of the cluster; a Node carries its images, capacities and volumes (often
// tens of kilobytes) and every object its managedFields, which would be most of a speaker's memory at size.
// Objects are trimmed before they are kept and before any handler sees them, and the speaker never writes one
// of them back (it writes only Events and its own records), so nothing trimmed can be lost.
import type { KubernetesObject, V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";

/** Written by `kubectl apply`: a second copy of the whole object, never read by the speaker. */
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

function trimMetadata(obj: KubernetesObject, keepAnnotations: boolean): void {
  const m = obj.metadata;
  if (!m) return;
  delete m.managedFields;
  if (!keepAnnotations) delete m.annotations;
  else if (m.annotations) delete m.annotations[LAST_APPLIED];
}

/**
 * Services: the metadata (name, namespace, uid and resourceVersion name the Service in Events; labels and the
 * pool annotations choose pools and advertisements), the spec (type, class, traffic policy) and the status's
 * ingress addresses.
 */
export function trimService(svc: V1Service): void {
  trimMetadata(svc, true);
  if (svc.status) svc.status = { loadBalancer: { ingress: svc.status.loadBalancer?.ingress ?? [] } };
}

/**
 * Nodes: name, labels and deletion mark, cordoning and taints' keys (shared/nodeEligibility.ts), the conditions'
 * type and status (Ready), and the addresses (the membership's peers).
 */
export function trimNode(node: V1Node): void {
  trimMetadata(node, false);
  const spec = node.spec;
  if (spec) {
    node.spec = {
      ...(spec.unschedulable !== undefined ? { unschedulable: spec.unschedulable } : {}),
      ...(spec.taints !== undefined
        ? { taints: spec.taints.map((t) => ({ key: t.key, effect: t.effect })) }
        : {}),
    };
  }
  const s = node.status;
  if (s) {
    node.status = {
      conditions: s.conditions?.map((c) => ({ type: c.type, status: c.status })),
      addresses: s.addresses,
    };
  }
}

/** EndpointSlices: the labels (which Service), and of each endpoint its addresses, readiness and node. */
export function trimEndpointSlice(slice: V1EndpointSlice): void {
  trimMetadata(slice, false);
  delete slice.ports;
  slice.endpoints = slice.endpoints?.map((e) => ({
    addresses: e.addresses,
    ...(e.conditions ? { conditions: { ready: e.conditions.ready } } : {}),
    ...(e.nodeName ? { nodeName: e.nodeName } : {}),
  }));
}
