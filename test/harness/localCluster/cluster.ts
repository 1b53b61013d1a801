// The local cluster that the end-to-end suite and the demo run Portico in, as its users run it: a control
// plane on loopback (etcd, kube-apiserver with the Node authorizer, kube-controller-manager, kube-scheduler)
// and worker nodes, each a network namespace on the test LAN running containerd + runc, kubelet and
// kube-proxy, with a client namespace on the same LAN. The apiserver is reached from the LAN (kubelets,
// kube-proxy, pods through the `kubernetes` Service) at the LAN's gateway address, forwarded into the
// LAN namespace; nothing is added to the root namespace's network. Pod Security's baseline level is enforced in
// every namespace that does not ask for another (podSecurity.ts).
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from "@kubernetes/client-node";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { ControlPlane, SERVICE_CIDR, SERVICE_CIDR_V6 } from "../controlPlane.ts";
import { freePort } from "../ports.ts";
import { ManagedProcess } from "../processes.ts";
import { IP, LAN_GATEWAY, sh, TestLan, type LanHost, type LanProcess } from "../netns.ts";
import type { Tools } from "../tools.ts";
import { waitFor } from "../wait.ts";
import { startEgressProxy } from "./apiserverEgress.ts";
import { destroyCgroup, ownCgroupBase, staleCgroups } from "./cgroups.ts";
import { POD_CIDR, podCidrFor } from "./nodeConfig.ts";
import { podSecurityAdmissionConfig } from "./podSecurity.ts";
import { WorkerNode, type ImageArchive } from "./workerNode.ts";

/** Where the LAN reaches the apiserver. */
export const APISERVER_PORT = 6443;
const CGROUP_PREFIX = "ptm";

export interface LocalClusterOptions {
  dir: string;
  tools: Tools;
  images: ImageArchive[];
  workers?: number;
  /** Kubelets point pods at the cluster DNS, which the caller installs (clusterDns.ts). */
  clusterDns?: boolean;
}

export class LocalCluster {
  readonly dir: string;
  readonly controlPlane: ControlPlane;
  readonly lan: TestLan;
  readonly nodes: WorkerNode[];
  private readonly daemons: ManagedProcess[];
  private readonly egress: LanProcess;

  private constructor(parts: {
    dir: string;
    controlPlane: ControlPlane;
    lan: TestLan;
    nodes: WorkerNode[];
    daemons: ManagedProcess[];
    egress: LanProcess;
  }) {
    ({ dir: this.dir, controlPlane: this.controlPlane, lan: this.lan } = parts);
    ({ nodes: this.nodes, daemons: this.daemons, egress: this.egress } = parts);
  }

  get kubeconfig(): string {
    return this.controlPlane.kubeconfig;
  }

  /** The client on the LAN, where end-to-end traffic comes from. */
  get client(): LanHost {
    return this.lan.client;
  }

  /** Starts everything; whatever did start is stopped again if anything fails. */
  static async start(options: LocalClusterOptions): Promise<LocalCluster> {
    const { dir, tools } = options;
    const workers = options.workers ?? 3;
    await mkdir(dir, { recursive: true });
    const base = ownCgroupBase();
    for (const stale of staleCgroups(base, CGROUP_PREFIX)) await destroyCgroup(stale);

    const cleanups: (() => Promise<void>)[] = [];
    try {
      const egressSocket = join(dir, "apiserver-egress.sock");
      const controlPlane = await ControlPlane.start(tools, join(dir, "control-plane"), {
        servingHosts: [LAN_GATEWAY],
        nodeAuthorization: true,
        kubeletEgressSocket: egressSocket,
        admissionConfig: podSecurityAdmissionConfig(),
      });
      cleanups.push(() => controlPlane.stop());
      const lan = await TestLan.create({ nodes: workers, gateway: true });
      cleanups.push(() => lan.destroy());
      const egress = await startEgressProxy(
        lan.lanNamespace,
        egressSocket,
        join(dir, "apiserver-egress.log"),
      );
      cleanups.push(() => egress.kill());
      const apiPort = Number(new URL(controlPlane.server).port);
      await lan.forward(lan.lanNamespace, { host: LAN_GATEWAY, port: APISERVER_PORT }, apiPort);
      await publishApiserverEndpoint(controlPlane.kubeconfig);

      const daemons = await startControllers(controlPlane, tools, dir);
      cleanups.push(() => Promise.all(daemons.map((d) => d.stop())).then(() => undefined));

      const lanServer = `https://${LAN_GATEWAY}:${APISERVER_PORT}`;
      const kubeProxyKubeconfig = await controlPlane.clientKubeconfig(
        "kube-proxy",
        { commonName: "system:kube-proxy" },
        lanServer,
      );
      const nodes: WorkerNode[] = [];
      for (const [index, host] of lan.nodes.entries()) {
        const name = `worker-${index + 1}`;
        const node = new WorkerNode({
          layout: {
            name,
            ip: host.ipv4,
            podCidr: podCidrFor(index + 1),
            dir: join(dir, "nodes", name),
            cgroup: join(base, `${CGROUP_PREFIX}-${lan.id}-${name}`),
            clusterDns: options.clusterDns,
          },
          host,
          binaries: { kubelet: tools.kubelet, kubeProxy: tools.kubeProxy },
          credentials: {
            kubeletKubeconfig: await controlPlane.clientKubeconfig(
              `kubelet-${name}`,
              { commonName: `system:node:${name}`, organization: "system:nodes" },
              lanServer,
            ),
            kubeProxyKubeconfig,
            caFile: controlPlane.ca.cert,
          },
        });
        nodes.push(node);
        cleanups.push(() => node.destroy());
      }
      await routePods(nodes, lan.lanNamespace);
      // Nodes start one after another: each imports the images, which is disk-bound.
      for (const node of nodes) await node.start(options.images);
      const cluster = new LocalCluster({ dir, controlPlane, lan, nodes, daemons, egress });
      await cluster.waitNodesReady();
      return cluster;
    } catch (err) {
      if (process.env.PORTICO_KEEP_RUN !== "1")
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      throw err;
    }
  }

  /** Waits until every running node is Ready in the API. */
  waitNodesReady(timeoutMs = 120_000): Promise<void> {
    const running = this.nodes.filter((n) => n.running).map((n) => n.name);
    return waitNodesReady(this.coreApi(), running, timeoutMs);
  }

  coreApi(): CoreV1Api {
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfig);
    return kc.makeApiClient(CoreV1Api);
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) await node.destroy().catch(() => undefined);
    await Promise.all(this.daemons.map((d) => d.stop()));
    await this.egress.kill();
    await this.lan.destroy();
    await this.controlPlane.stop();
    if (process.env.PORTICO_KEEP_RUN !== "1") await rm(this.dir, { recursive: true, force: true });
  }
}

/** Waits until each of `names` is a Ready Node. */
export async function waitNodesReady(core: CoreV1Api, names: string[], timeoutMs: number): Promise<void> {
  await waitFor(
    `nodes ${names.join(", ")} Ready`,
    async () => {
      const ready = (await core.listNode()).items
        .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
        .map((n) => n.metadata!.name!);
      const missing = names.filter((name) => !ready.includes(name));
      if (missing.length === 0) return true;
      throw new Error(`not Ready: ${missing.join(", ")}`);
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/**
 * The `kubernetes` Service's endpoint: the apiserver as the LAN reaches it. (Its own reconciler would
 * publish the loopback address it listens on, which no pod can reach.)
 */
async function publishApiserverEndpoint(kubeconfig: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace: "default",
    body: {
      metadata: {
        name: "kubernetes",
        labels: {
          "kubernetes.io/service-name": "kubernetes",
          "endpointslice.kubernetes.io/managed-by": "portico-local-cluster",
        },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: [LAN_GATEWAY], conditions: { ready: true } }],
      ports: [{ name: "https", port: APISERVER_PORT, protocol: "TCP" }],
    },
  });
}

/** kube-controller-manager and kube-scheduler, in the root namespace beside the apiserver. */
async function startControllers(plane: ControlPlane, tools: Tools, dir: string): Promise<ManagedProcess[]> {
  // One after the other: openssl keeps the CA's serial number in a file.
  const kcm = await startComponent(plane, dir, "kube-controller-manager", tools.kubeControllerManager, [
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${join(plane.dir, "pki", "sa.key")}`,
    `--root-ca-file=${plane.ca.cert}`,
    `--service-cluster-ip-range=${SERVICE_CIDR},${SERVICE_CIDR_V6}`,
    `--cluster-cidr=${POD_CIDR}`,
    // A dead node is noticed in 20 s rather than 50 (kubelets report every 4 s).
    "--node-monitor-grace-period=20s",
  ]);
  const scheduler = await startComponent(plane, dir, "kube-scheduler", tools.kubeScheduler, []);
  return [kcm, scheduler];
}

/**
 * A control-plane component under its own identity (`system:<name>`), which it also uses to check the
 * requests to its own secure port (bound to loopback on a free port); one instance, so no leader election.
 */
async function startComponent(
  plane: ControlPlane,
  dir: string,
  name: string,
  binary: string,
  args: string[],
): Promise<ManagedProcess> {
  const kubeconfig = await plane.clientKubeconfig(name, { commonName: `system:${name}` });
  return ManagedProcess.start(
    name,
    binary,
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${await freePort()}`,
      "--leader-elect=false",
      "--v=1",
      ...args,
    ],
    join(dir, `${name}.log`),
  );
}

/**
 * Each node reaches the other nodes' pods through them, and everything else through the gateway. The LAN's own
 * namespace, where the apiserver's egress dials from, reaches every node's pods too (admission webhooks).
 */
async function routePods(nodes: WorkerNode[], lanNamespace: string): Promise<void> {
  for (const node of nodes)
    await sh(IP, ["-n", lanNamespace, "route", "add", node.layout.podCidr, "via", node.layout.ip]);
  for (const node of nodes) {
    await sh(IP, ["-n", node.netns, "route", "add", "default", "via", LAN_GATEWAY]);
    for (const other of nodes) {
      if (other === node) continue;
      await sh(IP, ["-n", node.netns, "route", "add", other.layout.podCidr, "via", other.layout.ip]);
    }
  }
}
