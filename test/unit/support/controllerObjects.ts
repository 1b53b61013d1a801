// Small builders for Kubernetes objects in unit tests.
import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";

export function node(
  name: string,
  opts: {
    ready?: boolean;
    labels?: Record<string, string>;
    taints?: string[];
    deleting?: boolean;
    cordoned?: boolean;
    providerID?: string;
    ip?: string;
  } = {},
): V1Node {
  return {
    metadata: {
      name,
      labels: opts.labels ?? {},
      ...(opts.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      providerID: opts.providerID ?? `aws:///us-east-1a/i-${name.replace(/\W/g, "").padEnd(8, "0")}`,
      taints: (opts.taints ?? []).map((key) => ({ key, effect: "NoSchedule" })),
      ...(opts.cordoned ? { unschedulable: true } : {}),
    },
    status: {
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
      addresses: [{ type: "InternalIP", address: opts.ip ?? "10.0.0.1" }],
    },
  };
}

export function service(
  spec: Partial<NonNullable<V1Service["spec"]>> = {},
  annotations: Record<string, string> = {},
): V1Service {
  return {
    metadata: { name: "web", namespace: "shop", uid: "0000-1111", annotations, resourceVersion: "1" },
    spec: {
      type: "LoadBalancer",
      ports: [{ name: "http", port: 80, protocol: "TCP", nodePort: 30080 }],
      ...spec,
    },
  };
}

export function slice(
  endpoints: {
    ip: string;
    ready?: boolean;
    serving?: boolean;
    terminating?: boolean;
    node?: string;
    /** The pod behind the endpoint (targetRef), and its uid. */
    pod?: string;
    podUid?: string;
  }[],
  ports: Record<string, number> = { http: 8080 },
  serviceName = "web",
): V1EndpointSlice {
  return {
    metadata: {
      name: `${serviceName}-x`,
      namespace: "shop",
      labels: { "kubernetes.io/service-name": serviceName },
    },
    addressType: "IPv4",
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      ...(e.node ? { nodeName: e.node } : {}),
      ...(e.pod ? { targetRef: { kind: "Pod", name: e.pod, ...(e.podUid ? { uid: e.podUid } : {}) } } : {}),
      conditions: {
        ...(e.ready !== undefined ? { ready: e.ready } : {}),
        ...(e.serving !== undefined ? { serving: e.serving } : {}),
        ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
      },
    })),
    ports: Object.entries(ports).map(([name, port]) => ({ name, port, protocol: "TCP" })),
  };
}
