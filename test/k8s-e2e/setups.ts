// The set-ups Kubernetes' own LoadBalancer tests run against: the local cluster with its cluster DNS and Portico
// installed from the metal overlay as a user installs it, and the place the test runner (e2e.test) sits, as a
// client of the load balancers:
//   l2   an IPAddressPool on the LAN, announced by ARP; the runner is the LAN's client;
//   bgp  an IPAddressPool off the LAN, advertised to a router peering with every node (BGPPeer,
//        BGPAdvertisement); the runner is the host behind the router, which reaches the addresses only through
//        the routes the router learned;
//   eks, aks  Portico from the cloud overlays, with the emulators and their edges (cloudSetups.ts).
import { CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BEHIND, ROUTER, ROUTER_ASN, startRouter } from "../harness/bgpRouter.ts";
import { installClusterDns } from "../harness/localCluster/clusterDns.ts";
import { APISERVER_PORT, LocalCluster } from "../harness/localCluster/cluster.ts";
import { buildImages, runBuildScript, type ClusterImages } from "../harness/localCluster/images.ts";
import { installPortico } from "../harness/localCluster/install.ts";
import type { ImageArchive } from "../harness/localCluster/workerNode.ts";
import { IP, LAN_GATEWAY, sh, type LanHost } from "../harness/netns.ts";
import { ensureTools, type Tools } from "../harness/tools.ts";
import { waitFor } from "../harness/wait.ts";
import { cloudDnsZones, startCloud, type CloudSetupName } from "./cloudSetups.ts";

export type SetupName = "l2" | "bgp" | CloudSetupName;
export const SETUPS: SetupName[] = ["l2", "bgp", "eks", "aks"];

/** What k8s-e2e.sh builds: e2e.test and the images its tests and the cluster DNS run. */
export interface K8sE2eBuild {
  version: string;
  e2eTest: string;
  agnhost: ImageArchive;
  coredns: ImageArchive;
  seconds: Record<string, number>;
}

export interface Setup {
  name: SetupName;
  cluster: LocalCluster;
  /** Where e2e.test runs. */
  runner: Pick<LanHost, "namespace">;
  /** An admin kubeconfig naming the apiserver as the LAN reaches it. */
  kubeconfig: string;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL("../env/k8s-e2e.sh", import.meta.url));
/** On the LAN, beside the other tests' pool (192.0.2.240/28). */
const L2_POOL = "192.0.2.224/28";
/** TEST-NET-3: the L2 runner's source address, outside the nodes' network. */
const CLIENT_SOURCE = "203.0.113.2";
/** TEST-NET-2, off the LAN: reached only through the routes the router learned. */
const BGP_POOL = "198.51.100.0/28";
const API = { group: "portico.io", version: "v1alpha1" } as const;

export interface Built {
  tools: Tools;
  images: ClusterImages;
  build: K8sE2eBuild;
}

/**
 * The tests' Services name no class: Portico serves them as the cluster's load balancer, as a user moving from
 * MetalLB (which serves unclassed Services) sets it, with the flag on the controller and the speakers alike.
 */
const DEFAULT_LOAD_BALANCER = [
  { kind: "Deployment", name: "portico-controller" },
  { kind: "DaemonSet", name: "portico-speaker" },
].map((target) => ({
  target,
  patch: JSON.stringify([
    { op: "add", path: "/spec/template/spec/containers/0/args/-", value: "--default-load-balancer" },
  ]),
}));

export async function buildAll(): Promise<Built> {
  // One after the other: each is CPU- or disk-bound, and the two image builds share a lock.
  const tools = await ensureTools("cluster");
  const images = await buildImages();
  const build = await runBuildScript<K8sE2eBuild>(SCRIPT);
  return { tools, images, build };
}

export async function startSetup(name: SetupName, dir: string, built: Built): Promise<Setup> {
  const { tools, build } = built;
  const { pause, portico, workload, frr } = built.images;
  const images = [pause, portico, workload, frr, build.agnhost, build.coredns];
  await mkdir(dir, { recursive: true });
  const cluster = await LocalCluster.start({ dir: join(dir, "cluster"), tools, images, clusterDns: true });
  const cleanups: (() => Promise<void>)[] = [() => cluster.stop()];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => console.error(err));
  };
  try {
    if (name === "eks" || name === "aks") {
      await installClusterDns(cluster.kubeconfig, build.coredns.ref, { forward: cloudDnsZones(name) });
    } else {
      await installClusterDns(cluster.kubeconfig, build.coredns.ref);
      await installPortico(cluster.kubeconfig, {
        overlay: "metal",
        image: portico.ref,
        frrImage: frr.ref,
        pools: name === "l2" ? [{ name: "k8s-e2e", addresses: [L2_POOL] }] : [],
        kustomization: { patches: DEFAULT_LOAD_BALANCER },
      });
    }
    const runner =
      name === "l2"
        ? await clientOffTheNodesSubnet(cluster)
        : name === "bgp"
          ? await routeThroughRouter(cluster, dir, cleanups)
          : await startCloud(name, cluster, portico.ref, cleanups);
    const kubeconfig = await cluster.controlPlane.clientKubeconfig(
      "k8s-e2e-runner",
      { commonName: "k8s-e2e-runner", organization: "system:masters" },
      `https://${LAN_GATEWAY}:${APISERVER_PORT}`,
    );
    return { name, cluster, runner, kubeconfig, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The LAN's client, reaching the pool's addresses from an address of another network (routed back to it by the
 * LAN's gateway): the ExternalTrafficPolicy: Local tests judge the source address a pod sees preserved only when
 * it lies outside the nodes' /16 (loadbalancer.go getSubnetPrefix, written for clients outside a cloud's node
 * network), and the client's own LAN address is inside it.
 */
async function clientOffTheNodesSubnet(cluster: LocalCluster): Promise<LanHost> {
  const client = cluster.client;
  const lan = cluster.lan.lanNamespace;
  await sh(IP, ["-n", client.namespace, "addr", "add", `${CLIENT_SOURCE}/32`, "dev", client.iface]);
  await sh(IP, ["-n", client.namespace, "route", "add", L2_POOL, "dev", client.iface, "src", CLIENT_SOURCE]);
  await sh(IP, ["-n", lan, "route", "add", `${CLIENT_SOURCE}/32`, "via", client.ipv4]);
  // Forwarding inside the LAN's namespace only (the sysctl is per namespace): the nodes' replies reach the
  // client through the gateway.
  await sh(IP, ["netns", "exec", lan, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]);
  return client;
}

/**
 * The BGP set-up: a router peering with every node, the pool advertised to it, and the host behind it, which
 * reaches the apiserver through the router (the LAN's gateway routes the host's network back through it) and
 * the Services' addresses through the routes the router learned.
 */
async function routeThroughRouter(
  cluster: LocalCluster,
  dir: string,
  cleanups: (() => Promise<void>)[],
): Promise<LanHost> {
  const logDir = join(dir, "router");
  await mkdir(logDir, { recursive: true });
  const nodes = cluster.nodes.map((n) => n.host.ipv4);
  // Hashing a client's connections by addresses only, so that they all reach one node: ClientIP session
  // affinity through ECMP needs it (with ports hashed too, each connection may reach another node, whose
  // kube-proxy keeps its own affinity), and the tests of [Feature:LoadBalancer] ask for affinity.
  const router = await startRouter(
    cluster.lan.lanNamespace,
    nodes,
    logDir,
    (fn) => cleanups.push(fn),
    "addresses",
  );
  // Replies to the host behind the router go back through it, from the nodes (and their pods) and from the
  // apiserver's forwarder in the LAN's namespace.
  for (const namespace of [...cluster.nodes.map((n) => n.netns), cluster.lan.lanNamespace])
    await sh(IP, ["-n", namespace, "route", "add", BEHIND, "via", ROUTER.ipv4]);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const create = (plural: string, kind: string, spec: object) =>
    custom.createClusterCustomObject({
      ...API,
      plural,
      body: { apiVersion: `${API.group}/${API.version}`, kind, metadata: { name: "k8s-e2e" }, spec },
    });
  await create("ipaddresspools", "IPAddressPool", { addresses: [BGP_POOL] });
  await create("bgppeers", "BGPPeer", {
    myASN: ROUTER_ASN,
    peerASN: ROUTER_ASN,
    peerAddress: ROUTER.ipv4,
    connectTime: "2s",
  });
  await create("bgpadvertisements", "BGPAdvertisement", { ipAddressPools: ["k8s-e2e"] });
  await waitFor(
    "every node's session with the router established",
    async () => {
      const sessions =
        await router.frr.json<Record<string, { bgpState?: string }>>("show bgp neighbors json");
      const up = nodes.filter((n) => sessions[n]?.bgpState === "Established");
      if (up.length === nodes.length) return true;
      throw new Error(`established: ${up.join(", ") || "none"}`);
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  return router.behind;
}
