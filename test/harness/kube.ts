import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
  type V1Service,
  type V1EndpointSlice,
  type V1Taint,
} from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";

/** The label the harness puts on every Node a test creates; Nodes are cluster-wide, tests are parallel. */
export const TEST_NODE_LABEL = "test.portico.io/namespace";

export const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

export interface NodeSpec {
  /** e.g. `aws:///us-east-1a/i-0abc…`, matching an EC2 instance in the emulator. */
  providerID?: string;
  internalIP?: string;
  ready?: boolean;
  labels?: Record<string, string>;
  taints?: V1Taint[];
}

export interface EndpointSpec {
  ip: string;
  nodeName?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  /** The pod behind the endpoint (its targetRef), as the EndpointSlice controller names it. */
  pod?: { name: string; uid?: string };
}

/**
 * A test's view of the real apiserver: clients with admin rights and a namespace of its own. Cluster-scoped
 * objects it creates (Nodes) carry the namespace as a label so a controller under test can be confined to them.
 */
export class TestCluster {
  readonly core: CoreV1Api;
  readonly discovery: DiscoveryV1Api;
  readonly coordination: CoordinationV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  readonly apps: AppsV1Api;
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  private readonly createdNodes: string[] = [];
  private readonly deferred: (() => Promise<void>)[] = [];

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.kubeConfig = kubeConfig;
    this.namespace = namespace;
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.apps = kubeConfig.makeApiClient(AppsV1Api);
  }

  static async create(kubeconfigPath: string, prefix: string): Promise<TestCluster> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const name = `${prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .slice(0, 40)
      .replace(/-+$/, "")}-${randomBytes(3).toString("hex")}`;
    const cluster = new TestCluster(kc, name.replace(/^-+/, ""));
    await cluster.core.createNamespace({ body: { metadata: { name: cluster.namespace } } });
    // No controller-manager runs, so the `default` ServiceAccount that Pods need is made here, as it would be.
    await cluster.core.createNamespacedServiceAccount({
      namespace: cluster.namespace,
      body: { metadata: { name: "default" } },
    });
    return cluster;
  }

  /** Label selector matching exactly this test's Nodes. */
  get nodeSelector(): string {
    return `${TEST_NODE_LABEL}=${this.namespace}`;
  }

  /** A Node as a kubelet would register it: addresses, providerID, and a Ready condition in its status. */
  async createNode(name: string, spec: NodeSpec = {}): Promise<V1Node> {
    const fullName = `${this.namespace}-${name}`;
    await this.core.createNode({
      body: {
        metadata: { name: fullName, labels: { ...spec.labels, [TEST_NODE_LABEL]: this.namespace } },
        spec: { providerID: spec.providerID, taints: spec.taints },
      },
    });
    this.createdNodes.push(fullName);
    return this.setNodeStatus(fullName, { ready: spec.ready ?? true, internalIP: spec.internalIP });
  }

  async setNodeStatus(
    name: string,
    { ready, internalIP }: { ready: boolean; internalIP?: string | undefined },
  ): Promise<V1Node> {
    const now = new Date().toISOString();
    const status = {
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          reason: ready ? "KubeletReady" : "KubeletNotReady",
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      ...(internalIP
        ? {
            addresses: [
              { type: "InternalIP", address: internalIP },
              { type: "Hostname", address: name },
            ],
          }
        : {}),
    };
    return this.core.patchNodeStatus({ name, body: { status } }, mergePatch);
  }

  async createService(
    name: string,
    spec: V1Service["spec"],
    annotations: Record<string, string> = {},
  ): Promise<V1Service> {
    return this.core.createNamespacedService({
      namespace: this.namespace,
      body: { metadata: { name, annotations }, spec },
    });
  }

  async getService(name: string): Promise<V1Service> {
    return this.core.readNamespacedService({ name, namespace: this.namespace });
  }

  /** An EndpointSlice for `service`, as the EndpointSlice controller would write it. */
  async createEndpointSlice(
    service: string,
    endpoints: EndpointSpec[],
    ports: { name?: string; port: number; protocol?: string }[],
    name = `${service}-${randomBytes(3).toString("hex")}`,
  ): Promise<V1EndpointSlice> {
    return this.discovery.createNamespacedEndpointSlice({
      namespace: this.namespace,
      body: {
        metadata: {
          name,
          labels: {
            "kubernetes.io/service-name": service,
            "endpointslice.kubernetes.io/managed-by": "test.portico.io",
          },
        },
        addressType: endpoints.some((e) => e.ip.includes(":")) ? "IPv6" : "IPv4",
        endpoints: endpoints.map((e) => ({
          addresses: [e.ip],
          nodeName: e.nodeName,
          ...(e.pod
            ? { targetRef: { kind: "Pod", namespace: this.namespace, name: e.pod.name, uid: e.pod.uid } }
            : {}),
          conditions: {
            ready: e.ready ?? true,
            serving: e.serving ?? e.ready ?? true,
            terminating: e.terminating ?? false,
          },
        })),
        ports: ports.map((p) => ({ name: p.name ?? "", port: p.port, protocol: p.protocol ?? "TCP" })),
      },
    });
  }

  /** A Pod bound to a node with an IP and readiness in its status, as a kubelet would report it. */
  async createPod(
    name: string,
    opts: { labels?: Record<string, string>; nodeName?: string; podIP?: string; ready?: boolean },
  ): Promise<V1Pod> {
    await this.core.createNamespacedPod({
      namespace: this.namespace,
      body: {
        metadata: { name, labels: opts.labels },
        spec: { nodeName: opts.nodeName, containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
      },
    });
    const now = new Date().toISOString();
    return this.core.patchNamespacedPodStatus(
      {
        name,
        namespace: this.namespace,
        body: {
          status: {
            phase: "Running",
            podIP: opts.podIP,
            podIPs: opts.podIP ? [{ ip: opts.podIP }] : undefined,
            conditions: [
              { type: "Ready", status: opts.ready === false ? "False" : "True", lastTransitionTime: now },
            ],
          },
        },
      },
      mergePatch,
    );
  }

  /** Runs `fn` when the test ends, before the harness removes Nodes (e.g. to stop a controller first). */
  defer(fn: () => Promise<void>): void {
    this.deferred.unshift(fn);
  }

  /** Removes what a test made outside its namespace. The namespace itself stays: no namespace controller runs. */
  async cleanup(): Promise<void> {
    for (const fn of this.deferred) await fn();
    await Promise.all(this.createdNodes.map((name) => this.core.deleteNode({ name }).catch(() => undefined)));
  }
}
