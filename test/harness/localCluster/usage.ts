// The local cluster as a user and the LAN's client use it: a namespace with the test workload and
// LoadBalancer Services (admin clients, as kubectl would be), and HTTP from the client through the address,
// once or as a steady load. Used by the end-to-end tests (through e2e.ts), the demo and the benchmark.
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Deployment,
  type V1Service,
  type V1Condition,
} from "@kubernetes/client-node";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { E2eContext } from "../e2eSetup.ts";
import { waitNodesReady } from "./cluster.ts";
import { INSTALL_NAMESPACE, waitForRollout } from "./install.ts";
import { forwardInto, IP, LAN_GATEWAY, sh, type Forward } from "../netns.ts";
import { waitFor } from "../wait.ts";
import { SERVING_CONDITION } from "../../../controller/status.ts";

export const METAL_CLASS = "portico.io/metal";
export const WORKLOAD_PORT = 8080;
/** Where the workload serves the same behind a required proxy protocol header. */
export const WORKLOAD_PROXY_PORT = 8081;

/** What the workload answers: which pod on which node, and the source address it saw. */
export interface EchoAnswer {
  pod: string;
  node: string;
  client: string;
  /** Behind a proxy protocol header (the workload's PROXY_PORT): the connection's own peer. */
  peer?: string;
}

/** A namespace of the test's own on the local cluster, removed afterwards, with admin clients. */
export class E2eNamespace {
  readonly name: string;
  readonly context: E2eContext;
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;

  constructor(context: E2eContext, name: string) {
    this.context = context;
    this.name = name;
    this.kc = new KubeConfig();
    this.kc.loadFromFile(context.kubeconfig);
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.apps = this.kc.makeApiClient(AppsV1Api);
  }

  /** Creates the namespace `name` on the cluster. */
  static async create(context: E2eContext, name: string): Promise<E2eNamespace> {
    const ns = new E2eNamespace(context, name);
    await ns.core.createNamespace({ body: { metadata: { name } } });
    return ns;
  }

  /** The test workload: `replicas` pods answering with their name, node and the client's address. */
  async deployEcho(
    name: string,
    replicas: number,
    extra: { drainSeconds?: number; spread?: boolean } = {},
  ): Promise<V1Deployment> {
    const labels = { app: name };
    const env = [
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      { name: "PORT", value: String(WORKLOAD_PORT) },
      { name: "DRAIN_SECONDS", value: String(extra.drainSeconds ?? 0) },
    ];
    return this.apps.createNamespacedDeployment({
      namespace: this.name,
      body: {
        metadata: { name, labels },
        spec: {
          replicas,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              terminationGracePeriodSeconds: (extra.drainSeconds ?? 0) + 5,
              // One pod per node, when asked.
              topologySpreadConstraints: extra.spread
                ? [
                    {
                      maxSkew: 1,
                      topologyKey: "kubernetes.io/hostname",
                      whenUnsatisfiable: "DoNotSchedule",
                      labelSelector: { matchLabels: labels },
                    },
                  ]
                : undefined,
              containers: [
                {
                  name: "echo",
                  image: this.context.workloadImage,
                  env,
                  ports: [{ containerPort: WORKLOAD_PORT }],
                  readinessProbe: { httpGet: { path: "/healthz", port: WORKLOAD_PORT }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
  }

  /**
   * A pod of the workload `app` that Kubernetes calls ready (it has no readiness probe) but that answers nothing
   * on the workload's port: it serves on other ports. It is an endpoint of the app's Services like the others,
   * so a load balancer is told of it; only the load balancer's own health checks can find it deaf. Returns its
   * address once it runs.
   */
  async runDeafPod(app: string, name: string, timeoutMs = 120_000): Promise<string> {
    await this.core.createNamespacedPod({
      namespace: this.name,
      body: {
        metadata: { name, labels: { app } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "echo",
              image: this.context.workloadImage,
              env: [
                { name: "PORT", value: String(WORKLOAD_PORT + 1000) },
                { name: "PROXY_PORT", value: String(WORKLOAD_PORT + 1001) },
              ],
            },
          ],
        },
      },
    });
    return waitFor(
      `the pod ${name} to be ready`,
      async () => {
        const pod = await this.core.readNamespacedPod({ name, namespace: this.name });
        const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
        return (ready && pod.status?.podIP) || undefined;
      },
      { timeoutMs, intervalMs: 500 },
    );
  }

  /** Sets a Deployment's replicas. */
  async scale(name: string, replicas: number): Promise<void> {
    await this.apps.replaceNamespacedDeploymentScale({
      name,
      namespace: this.name,
      body: { metadata: { name, namespace: this.name }, spec: { replicas } },
    });
  }

  /** Waits until the Deployment has all its replicas available. */
  async waitAvailable(name: string, timeoutMs = 120_000): Promise<void> {
    await waitForRollout(
      this.kc,
      [{ kind: "Deployment", metadata: { name, namespace: this.name } }],
      timeoutMs,
    );
  }

  /** A LoadBalancer Service of Portico's metal class in front of the workload `app`. */
  async createLoadBalancer(
    name: string,
    app: string,
    spec: Partial<NonNullable<V1Service["spec"]>> = {},
    annotations: Record<string, string> = {},
  ): Promise<V1Service> {
    return this.core.createNamespacedService({
      namespace: this.name,
      body: {
        metadata: { name, annotations },
        spec: {
          type: "LoadBalancer",
          loadBalancerClass: METAL_CLASS,
          selector: { app },
          ports: [{ name: "http", port: 80, targetPort: WORKLOAD_PORT, protocol: "TCP" }],
          ...spec,
        },
      },
    });
  }

  /** The address Portico wrote into the Service's status. */
  async waitForAddress(service: string, timeoutMs = 60_000): Promise<string> {
    return waitFor(
      `an address in the status of Service ${this.name}/${service}`,
      async () => {
        const svc = await this.core.readNamespacedService({ name: service, namespace: this.name });
        return svc.status?.loadBalancer?.ingress?.[0]?.ip;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  /** Waits for the Service's Serving condition to have `status`; resolves to the condition. */
  async waitForServing(service: string, status: "True" | "False", timeoutMs = 180_000): Promise<V1Condition> {
    return waitFor(
      `Service ${this.name}/${service} to report Serving ${status}`,
      async () => {
        const svc = await this.core.readNamespacedService({ name: service, namespace: this.name });
        return svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION && c.status === status);
      },
      { timeoutMs, intervalMs: 500 },
    );
  }

  async delete(): Promise<void> {
    await this.core.deleteNamespace({ name: this.name }).catch(() => undefined);
  }
}

/**
 * Waits until the cluster is whole again after a disturbance: every node Ready, Portico's controller
 * Deployment available and its speaker ready on every node.
 */
export async function clusterSettled(context: E2eContext, timeoutMs = 180_000): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(context.kubeconfig);
  const names = context.nodes.map((n) => n.layout.name);
  await waitNodesReady(kc.makeApiClient(CoreV1Api), names, timeoutMs);
  await waitForRollout(
    kc,
    [
      { kind: "Deployment", metadata: { name: "portico-controller", namespace: INSTALL_NAMESPACE } },
      { kind: "DaemonSet", metadata: { name: "portico-speaker", namespace: INSTALL_NAMESPACE } },
    ],
    timeoutMs,
  );
}

/** One HTTP GET from the LAN's client; undefined when it failed (refused, timed out, reset). */
export function clientGet(
  context: E2eContext,
  url: string,
  timeoutSeconds = 2,
): Promise<EchoAnswer | undefined> {
  return getFrom(context.client.namespace, url, timeoutSeconds);
}

/** The workload's answer to an HTTP GET from a client in `namespace` (another than the LAN's); undefined if none. */
export async function getFrom(
  namespace: string,
  url: string,
  timeoutSeconds = 2,
  /** More of curl's options (e.g. --cacert, --resolve). */
  curlOptions: readonly string[] = [],
): Promise<EchoAnswer | undefined> {
  const out = await sh(
    IP,
    ["netns", "exec", namespace, "curl", "-sf", "-m", String(timeoutSeconds), ...curlOptions, url],
    (timeoutSeconds + 5) * 1000,
  ).catch(() => undefined);
  return out ? (JSON.parse(out) as EchoAnswer) : undefined;
}

/** One UDP datagram from the LAN's client and the workload's answer to it; undefined when none came. */
export async function clientDatagram(
  context: E2eContext,
  address: string,
  port: number,
  timeoutSeconds = 2,
): Promise<EchoAnswer | undefined> {
  const script = [
    "import socket, sys",
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
    `s.settimeout(${timeoutSeconds})`,
    `s.sendto(b"hello", (sys.argv[1], int(sys.argv[2])))`,
    "print(s.recvfrom(4096)[0].decode().strip())",
  ].join("\n");
  const out = await sh(
    IP,
    ["netns", "exec", context.client.namespace, "python3", "-c", script, address, String(port)],
    (timeoutSeconds + 5) * 1000,
  ).catch(() => undefined);
  return out ? (JSON.parse(out) as EchoAnswer) : undefined;
}

/** The HTTP status of a GET from the LAN's client (0 when no answer came). */
export async function clientStatus(context: E2eContext, url: string, timeoutSeconds = 2): Promise<number> {
  const out = await sh(
    IP,
    ["netns", "exec", context.client.namespace, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"].concat(
      ["-m", String(timeoutSeconds), url],
    ),
    (timeoutSeconds + 5) * 1000,
  ).catch(() => "000");
  return Number(out.trim() || 0);
}

/**
 * Makes a service listening on 127.0.0.1:`port` of this machine (a cloud emulator) reachable from the
 * cluster's nodes and pods at the LAN's gateway, on the same port; `stop` undoes it.
 */
export function reachableFromPods(
  context: Pick<E2eContext, "client">,
  port: number,
  dir: string,
): Promise<Forward> {
  return forwardInto(context.client.switchPort.namespace, { host: LAN_GATEWAY, port }, port, dir);
}

/** One request of a ClientLoad. */
export interface LoadResult {
  start: number;
  ms: number;
  ok: boolean;
  pod?: string;
  error?: string;
}

/** Steady HTTP requests from the LAN's client (loadClient.ts), collected until stopped. */
export class ClientLoad {
  readonly results: LoadResult[] = [];
  private readonly child: ChildProcess;
  private readonly closed: Promise<void>;

  constructor(context: E2eContext, url: string, opts: { intervalMs?: number; timeoutMs?: number } = {}) {
    const argv = ["netns", "exec", context.client.namespace, process.execPath, LOAD_CLIENT, url];
    argv.push(String(opts.intervalMs ?? 50), String(opts.timeoutMs ?? 1000));
    this.child = spawn("/usr/bin/setpriv", ["--pdeathsig", "KILL", "--", IP, ...argv], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      this.results.push(JSON.parse(line) as LoadResult);
    });
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
  }

  /** Waits until `count` requests in a row have succeeded (the load is flowing). */
  async waitSteady(count = 10, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `${count} successful requests in a row`,
      () => {
        const last = this.results.slice(-count);
        return (last.length === count && last.every((r) => r.ok)) || undefined;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** Stops sending, lets the requests in flight finish, and returns every result. */
  async stop(): Promise<LoadResult[]> {
    this.child.kill("SIGTERM");
    await this.closed;
    return this.results;
  }
}

const LOAD_CLIENT = join(import.meta.dirname, "..", "loadClient.ts");

/**
 * Failed requests and the longest stretch without a successful answer (first failure to next success; an outage
 * still open when the load stopped counts to its last request).
 */
export function outages(results: LoadResult[]): { failed: number; total: number; longestMs: number } {
  let longestMs = 0;
  let since: number | undefined;
  const sorted = [...results].sort((a, b) => a.start - b.start);
  for (const r of sorted) {
    if (!r.ok) since ??= r.start;
    else if (since !== undefined) {
      longestMs = Math.max(longestMs, r.start - since);
      since = undefined;
    }
  }
  if (since !== undefined) longestMs = Math.max(longestMs, sorted.at(-1)!.start - since);
  return { failed: results.filter((r) => !r.ok).length, total: results.length, longestMs };
}
