// A bare-metal cluster for the end-to-end tests: a LAN of network namespaces (test/harness/netns.ts) whose
// nodes are Kubernetes Nodes on the real apiserver, each running the real speaker process (speaker/main.ts)
// inside its namespace, exactly as a hostNetwork DaemonSet pod would run on a node.
//
// Traffic to a LoadBalancer address is served on every node like kube-proxy in IPVS mode does it: the
// address is bound to the node's loopback (so the kernel accepts connections for it) with arp_ignore=1 and
// arp_announce=2, so the kernel itself never answers ARP for it or uses it as an ARP source; IPv6 addresses
// on loopback are never answered by the kernel's Neighbor Discovery on other interfaces. Only the speaker
// answers, so a client's traffic enters through the elected node. Each node runs a responder on port 8080
// that answers with its node name, so a client sees which node it reached.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { electAnnouncer } from "../../../speaker/l2/election.ts";
import { L2STATUS_GROUP, L2STATUS_PLURAL, L2STATUS_VERSION } from "../../../shared/l2status.ts";
// From the modules themselves, not index.ts (which needs the vitest runner): bench/speaker.ts uses these too.
import { mergePatch, type TestCluster } from "../../harness/kube.ts";
import { waitFor } from "../../harness/wait.ts";
import { installCrds, renderOverlay } from "../../harness/manifests.ts";
import { TestLan, type LanHost, type LanProcess } from "../../harness/netns.ts";
import { metricSum, speakerMetrics, startResponder } from "./clients.ts";

export const METAL_CLASS = "portico.io/metal";
export const SERVICE_PORT = 8080;
/** Longer than the speaker's gratuitous burst on takeover (0, 500 and 1000 ms). */
export const TAKEOVER_BURST_MS = 1500;
/** Generous: a speaker loads in well under a second, but CI machines may be busy with other tests. */
const STARTUP_TIMEOUT_MS = 60_000;
/** Per-test timeout for tests that start speakers. */
export const E2E_TIMEOUT_MS = 180_000;

/**
 * The speaker's entry point: its TypeScript source, or what PORTICO_SPEAKER_MAIN names — the benchmarks run the
 * compiled JavaScript the image ships, since Node's TypeScript stripping alone costs some 30 MiB of memory.
 */
const speakerMain = () =>
  process.env.PORTICO_SPEAKER_MAIN ?? fileURLToPath(new URL("../../../speaker/main.ts", import.meta.url));
const BUILD_ADDON = fileURLToPath(new URL("../../../speaker/native/build.sh", import.meta.url));

/** Builds the packet-socket addon if it is missing or older than its source (a no-op otherwise). */
export async function buildAddon(): Promise<void> {
  await promisify(execFile)(BUILD_ADDON, [], { timeout: 120_000 });
}

/**
 * Compiles Portico as the image does (tsconfig.build.json into dist/) and has speakers started from then on run
 * that JavaScript: what a benchmark measures is then what users run.
 */
export async function useCompiledSpeaker(): Promise<void> {
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  const tsc = fileURLToPath(new URL("../../../node_modules/typescript/bin/tsc", import.meta.url));
  await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: root,
    timeout: 600_000,
  });
  process.env.PORTICO_SPEAKER_MAIN = fileURLToPath(new URL("../../../dist/speaker/main.js", import.meta.url));
}

/** One node: its namespace on the LAN, its Node name, and its speaker process while running. */
export class MetalNode {
  readonly host: LanHost;
  readonly name: string;
  process: LanProcess | undefined;
  /** What the speaker last logged as its announced addresses. */
  owned: string[] = [];
  /** The live speakers this one last reported. */
  live: string[] = [];
  /** Nodes this speaker's failure detector declared dead. */
  declaredDead: string[] = [];
  /** Addresses this speaker stopped answering after holding them for a new announcer, and why it stopped. */
  handedOver: { address: string; to?: string; reason: string }[] = [];
  /** Addresses this speaker's conflict probes found answered by another host, with that host's MAC. */
  foundInUse: { address: string; mac: string }[] = [];
  started = false;
  private readonly metal: MetalCluster;

  constructor(metal: MetalCluster, host: LanHost, name: string) {
    this.metal = metal;
    this.host = host;
    this.name = name;
  }

  get mac(): string {
    return this.host.mac;
  }

  /** Starts the real speaker binary in this node's namespace. */
  startSpeaker(extraArgs: string[] = []): void {
    const { cluster, kubeconfigPath } = this.metal;
    this.owned = [];
    this.started = false;
    this.process = this.metal.lan.start(
      this.host,
      `speaker-${this.name}`,
      process.execPath,
      [
        speakerMain(),
        `--node-name=${this.name}`,
        `--kubeconfig=${kubeconfigPath}`,
        `--namespace=${cluster.namespace}`,
        `--node-selector=${cluster.nodeSelector}`,
        "--metrics-address=127.0.0.1:7472",
        "--log-level=debug",
        ...extraArgs,
      ],
      { onLine: (line) => this.onLog(line) },
    );
  }

  private onLog(line: string): void {
    let entry: {
      msg?: string;
      owned?: string[];
      member?: string;
      live?: string[];
      address?: string;
      to?: string;
      reason?: string;
      mac?: string;
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg === "speaker started") this.started = true;
    if (entry.msg === "live speakers changed") this.live = entry.live ?? [];
    if (entry.msg === "announced addresses changed") this.owned = entry.owned ?? [];
    if (entry.msg === "speaker declared dead" && entry.member) this.declaredDead.push(entry.member);
    if (entry.msg?.includes("in use by another host") && entry.address && entry.mac)
      this.foundInUse.push({ address: entry.address, mac: entry.mac });
    if (entry.msg === "address handed over" && entry.address && entry.reason)
      this.handedOver.push({
        address: entry.address,
        reason: entry.reason,
        ...(entry.to ? { to: entry.to } : {}),
      });
  }

  /** SIGKILL: a crash, no goodbye. */
  async kill(): Promise<void> {
    await this.process?.signal("SIGKILL");
    this.owned = [];
  }

  /** SIGTERM: an orderly shutdown that hands the addresses over. */
  async terminate(): Promise<void> {
    await this.process?.signal("SIGTERM");
    this.owned = [];
  }
}

/** A ServiceL2Status record, the fields the tests read. */
export interface L2Record {
  status: { node: string; serviceName: string; addresses?: string[]; interfaces?: { name: string }[] };
  metadata: { ownerReferences?: { kind: string; name: string }[] };
}

export class MetalCluster {
  readonly lan: TestLan;
  readonly cluster: TestCluster;
  readonly kubeconfigPath: string;
  readonly nodes: MetalNode[] = [];

  private constructor(lan: TestLan, cluster: TestCluster, kubeconfigPath: string) {
    this.lan = lan;
    this.cluster = cluster;
    this.kubeconfigPath = kubeconfigPath;
  }

  /**
   * The LAN, one Ready Node per node namespace (InternalIP = its LAN address), the apiserver forwarded
   * into each namespace, the given LoadBalancer addresses bound on every node, a responder per node, and the
   * metal CRDs.
   * Speakers are not started yet. Everything is removed when the test ends, also when it fails.
   */
  static async create(
    cluster: TestCluster,
    options: {
      nodes: number;
      addresses: string[];
      onCleanup: (fn: () => Promise<void>) => void;
      mldSnooping?: boolean;
    },
  ): Promise<MetalCluster> {
    // Installed as every deployment has them, and installed once they stay for the apiserver's other tests:
    // the speakers record where they announce, and an address stays with the node that records it.
    await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
    const lan = await TestLan.create({ nodes: options.nodes, mldSnooping: options.mldSnooping ?? false });
    options.onCleanup(() => lan.destroy());
    const port = Number(new URL(cluster.kubeConfig.getCurrentCluster()!.server).port);
    const kubeconfigPath = process.env.KUBECONFIG!;
    const metal = new MetalCluster(lan, cluster, kubeconfigPath);
    for (const [i, host] of lan.nodes.entries()) {
      const node = await cluster.createNode(`node${i}`, { internalIP: host.ipv4 });
      metal.nodes.push(new MetalNode(metal, host, node.metadata!.name!));
      await lan.forwardApiserver(host, port);
      await lan.exec(host, "sysctl", [
        "-q",
        "-w",
        "net.ipv4.conf.all.arp_ignore=1",
        "net.ipv4.conf.all.arp_announce=2",
      ]);
      for (const address of options.addresses) {
        const prefix = address.includes(":") ? "128" : "32";
        await lan.exec(host, "ip", [
          "addr",
          "add",
          `${address}/${prefix}`,
          "dev",
          "lo",
          ...(prefix === "128" ? ["nodad"] : []),
        ]);
      }
      await startResponder(lan, host, SERVICE_PORT, metal.nodes[i]!.name);
    }
    return metal;
  }

  node(name: string): MetalNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  }

  /**
   * Starts every speaker and waits until each sees all of them alive, so that no speaker that settled
   * before the others started has announced (and recorded events) in the meantime.
   */
  async startSpeakers(extraArgs: string[] = []): Promise<void> {
    for (const node of this.nodes) node.startSpeaker(extraArgs);
    await this.waitAllAlive();
  }

  /** Waits until every node's speaker has started and sees all of them alive. */
  async waitAllAlive(): Promise<void> {
    const all = this.nodes.map((n) => n.name).sort();
    await waitFor(
      "every speaker to see all speakers alive",
      () => {
        const views = this.nodes.map((n) => `${n.name}: ${n.started ? `[${n.live.join(" ")}]` : "starting"}`);
        if (this.nodes.every((n) => n.started && [...n.live].sort().join() === all.join())) return true;
        throw new Error(views.join("; "));
      },
      { timeoutMs: STARTUP_TIMEOUT_MS },
    );
  }

  /** The node the shared election picks for `address` among `nodes` (default: all). */
  /** Each speaker's count of elections, in the order of `nodes`: a rise says it decided again. */
  elections(nodes: MetalNode[] = this.nodes): Promise<number[]> {
    return Promise.all(
      nodes.map(async (n) => metricSum(await speakerMetrics(n.host), "portico_speaker_elections_total")),
    );
  }

  /** Runs `change` and waits until every speaker of `nodes` has decided again after it. */
  async decidedAgainAfter(change: () => Promise<unknown>, nodes: MetalNode[] = this.nodes): Promise<void> {
    const before = await this.elections(nodes);
    await change();
    await waitFor(`the speakers of ${nodes.map((n) => n.name).join(", ")} to decide again`, async () =>
      (await this.elections(nodes)).every((count, i) => count > before[i]!),
    );
  }

  electedFor(address: string, nodes: MetalNode[] = this.nodes): MetalNode {
    const winner = electAnnouncer(
      address,
      nodes.map((n) => n.name),
    );
    return this.node(winner!);
  }

  /** The ServiceL2Status records in the test's namespace, as the apiserver holds them now. */
  async l2Records(): Promise<L2Record[]> {
    const list = (await this.cluster.kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: L2STATUS_GROUP,
      version: L2STATUS_VERSION,
      plural: L2STATUS_PLURAL,
      namespace: this.cluster.namespace,
    })) as { items: L2Record[] };
    return list.items;
  }

  /** The nodes whose speaker currently says it announces `address`. */
  announcersOf(address: string): MetalNode[] {
    return this.nodes.filter((n) => n.process?.running && n.owned.includes(address));
  }

  /** A LoadBalancer Service of the metal class with its ingress addresses written, as the controller would. */
  async createService(
    name: string,
    addresses: string[],
    options: { local?: boolean; endpointNodes?: MetalNode[] } = {},
  ): Promise<void> {
    const { cluster } = this;
    await cluster.createService(name, {
      type: "LoadBalancer",
      loadBalancerClass: METAL_CLASS,
      externalTrafficPolicy: options.local ? "Local" : "Cluster",
      ports: [{ port: SERVICE_PORT, targetPort: SERVICE_PORT, protocol: "TCP" }],
    });
    await this.setIngress(name, addresses);
    const endpointNodes = options.endpointNodes ?? this.nodes.slice(0, 1);
    await cluster.createEndpointSlice(
      name,
      endpointNodes.map((n) => ({ ip: n.host.ipv4, nodeName: n.name })),
      [{ port: SERVICE_PORT }],
      `${name}-endpoints`,
    );
  }

  async setIngress(name: string, addresses: string[]): Promise<void> {
    await this.cluster.core.patchNamespacedServiceStatus(
      {
        name,
        namespace: this.cluster.namespace,
        body: { status: { loadBalancer: { ingress: addresses.map((ip) => ({ ip })) } } },
      },
      mergePatch,
    );
  }

  /** Marks the Service's endpoints ready or not, as a failing readiness probe would. */
  async setEndpointReady(name: string, ready: boolean): Promise<void> {
    const slice = await this.cluster.discovery.readNamespacedEndpointSlice({
      name: `${name}-endpoints`,
      namespace: this.cluster.namespace,
    });
    const endpoints = (slice.endpoints ?? []).map((e) => ({ ...e, conditions: { ...e.conditions, ready } }));
    await this.cluster.discovery.patchNamespacedEndpointSlice(
      { name: `${name}-endpoints`, namespace: this.cluster.namespace, body: { endpoints } },
      mergePatch,
    );
  }

  /** Moves the Service's (single) ready endpoint to `node`, as a rescheduled pod would. */
  async moveEndpoint(name: string, node: MetalNode): Promise<void> {
    await this.cluster.discovery.patchNamespacedEndpointSlice(
      {
        name: `${name}-endpoints`,
        namespace: this.cluster.namespace,
        body: {
          endpoints: [{ addresses: [node.host.ipv4], nodeName: node.name, conditions: { ready: true } }],
        },
      },
      mergePatch,
    );
  }
}
