// A bare-metal cluster in BGP mode for the tests and the benchmark: the LAN of test/integration/metal (nodes
// with the real speaker, Service addresses bound on loopback as kube-proxy's IPVS mode does, a responder per
// node), plus FRR on every node driven by its speaker through the FRR agent, a router namespace (the LAN's
// client host) running its own FRR that peers with every node over iBGP with BFD, and a client behind the
// router that reaches Service addresses only through the routes the router learned.
import { CustomObjectsApi, loadYaml, type KubernetesObject } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FrrInstance, hostBehind } from "../../harness/frr.ts";
import { TEST_NODE_LABEL, type TestCluster } from "../../harness/kube.ts";
import { installCrds, MANIFESTS } from "../../harness/manifests.ts";
import { type LanHost } from "../../harness/netns.ts";
import { createPool, installPoolCrd, type TestPool } from "../../harness/pools.ts";
import { waitFor } from "../../harness/wait.ts";
import { MetalCluster, type MetalNode } from "../metal/speakers.ts";

export const ASN = 64512;
const API = { group: "portico.io", version: "v1alpha1" } as const;

export interface BgpLan {
  readonly metal: MetalCluster;
  readonly router: FrrInstance;
  readonly routerHost: LanHost;
  readonly client: LanHost;
  readonly frr: Map<string, FrrInstance>;
  readonly pool: TestPool;
  /** The BGPPeers every node peers with: the router's IPv4 and IPv6 addresses. */
  readonly peerNames: readonly [string, string];
  /** Creates a cluster-scoped Portico object, deleted after the test. */
  create(plural: string, kind: string, name: string, spec: Record<string, unknown>): Promise<void>;
  /** Starts the speaker of `node` in BGP mode (its FRR directory). */
  startSpeaker(node: MetalNode): void;
}

export async function createBgpLan(
  cluster: TestCluster,
  options: {
    nodes: number;
    addresses: string[];
    poolAddresses: string[];
    onCleanup: (fn: () => Promise<void>) => void;
    bfd?: boolean;
    /** The TCP MD5 password the router expects from every node. */
    routerPassword?: string;
    /** Fields of the BGPPeers' specs beside (or instead of) the defaults. */
    peer?: Record<string, unknown>;
  },
): Promise<BgpLan> {
  const metal = await MetalCluster.create(cluster, {
    nodes: options.nodes,
    addresses: options.addresses,
    onCleanup: options.onCleanup,
  });
  const { lan } = metal;
  const routerHost = lan.client;
  await installPoolCrd(cluster);
  await installCrds(
    cluster.kubeConfig,
    ["bgppeers", "bgpadvertisements", "bfdprofiles", "servicebgpstatuses"].map((plural) =>
      loadYaml<KubernetesObject>(
        readFileSync(join(MANIFESTS, "base", "crds", `${plural}.portico.io.yaml`), "utf8"),
      ),
    ),
  );
  const router = await FrrInstance.start(lan, routerHost, "router");
  const instances: FrrInstance[] = [router];
  options.onCleanup(async () => {
    await Promise.all(instances.map((i) => i.kill()));
    instances.forEach((i) => i.remove());
  });
  await router.configure(
    routerConfig(
      metal.nodes.map((n) => n.host),
      options.routerPassword,
      options.bfd !== false,
    ),
  );
  // New connections spread over the paths by their ports, as datacenter routers hash flows.
  await lan.exec(routerHost, "sysctl", ["-q", "-w", "net.ipv4.fib_multipath_hash_policy=1"]);
  const client = await hostBehind(lan, routerHost, options.onCleanup);
  const frr = new Map<string, FrrInstance>();
  for (const node of metal.nodes) {
    // Replies to the client go back through the router, as a node's default route would take them.
    await lan.exec(node.host, "ip", ["route", "add", "198.18.0.0/24", "via", routerHost.ipv4]);
    await lan.exec(node.host, "ip", ["-6", "route", "add", "2001:db8:ff::/64", "via", routerHost.ipv6]);
    const instance = await FrrInstance.start(lan, node.host, `frr-${node.name}`);
    instance.startAgent();
    instances.push(instance);
    frr.set(node.name, instance);
  }
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const create = async (plural: string, kind: string, name: string, spec: Record<string, unknown>) => {
    await custom.createClusterCustomObject({
      ...API,
      plural,
      body: { apiVersion: "portico.io/v1alpha1", kind, metadata: { name }, spec },
    });
    cluster.defer(async () => {
      await custom.deleteClusterCustomObject({ ...API, plural, name }).catch(() => undefined);
    });
  };
  const pool = await createPool(cluster, "bgp", { addresses: options.poolAddresses });
  const peerNames = [`${cluster.namespace}-router`, `${cluster.namespace}-router6`] as const;
  const bfdName = `${cluster.namespace}-fast`;
  if (options.bfd !== false) {
    await create("bfdprofiles", "BFDProfile", bfdName, {
      receiveInterval: 100,
      transmitInterval: 100,
      detectMultiplier: 3,
    });
  }
  // Cluster-scoped objects of tests running side by side: each selects only its own test's nodes and pool.
  for (const [name, peerAddress] of [
    [peerNames[0], routerHost.ipv4],
    [peerNames[1], routerHost.ipv6],
  ]) {
    await create("bgppeers", "BGPPeer", name!, {
      myASN: ASN,
      peerASN: ASN,
      peerAddress,
      holdTime: "9s",
      ...(options.bfd !== false ? { bfdProfile: bfdName } : {}),
      nodeSelectors: [{ matchLabels: { [TEST_NODE_LABEL]: cluster.namespace } }],
      ...options.peer,
    });
  }
  const startSpeaker = (node: MetalNode) =>
    node.startSpeaker([
      `--frr-config-dir=${frr.get(node.name)!.dir}`,
      `--secret-namespace=${cluster.namespace}`,
    ]);
  return { metal, router, routerHost, client, frr, pool, peerNames, create, startSpeaker };
}

/** Starts every speaker in BGP mode and waits until each sees all of them. */
export async function startBgpSpeakers(bgp: BgpLan): Promise<void> {
  for (const node of bgp.metal.nodes) bgp.startSpeaker(node);
  const all = bgp.metal.nodes.map((n) => n.name).sort();
  await waitFor(
    "every speaker to start and see the others",
    () => bgp.metal.nodes.every((n) => n.started && [...n.live].sort().join() === all.join()),
    { timeoutMs: 60_000 },
  );
}

/** The router: iBGP with every node (IPv4 and IPv6 sessions), BFD unless asked not to, and ECMP over up to 16 paths. */
function routerConfig(nodes: readonly LanHost[], password: string | undefined, bfd: boolean): string {
  const neighbors = nodes.flatMap((n) => [n.ipv4, n.ipv6]);
  return [
    "frr defaults traditional",
    "hostname router",
    "router bgp 64512",
    " bgp router-id 192.0.2.2",
    " no bgp ebgp-requires-policy",
    " no bgp default ipv4-unicast",
    ...neighbors.flatMap((address) => [
      ` neighbor ${address} remote-as ${ASN}`,
      ` neighbor ${address} timers 3 9`,
      ...(password ? [` neighbor ${address} password ${password}`] : []),
      ...(bfd ? [` neighbor ${address} bfd`, ` neighbor ${address} bfd profile fast`] : []),
    ]),
    " address-family ipv4 unicast",
    "  maximum-paths ibgp 16",
    ...nodes.map((n) => `  neighbor ${n.ipv4} activate`),
    " exit-address-family",
    " address-family ipv6 unicast",
    "  maximum-paths ibgp 16",
    ...nodes.map((n) => `  neighbor ${n.ipv6} activate`),
    " exit-address-family",
    "exit",
    "bfd",
    " profile fast",
    "  receive-interval 100",
    "  transmit-interval 100",
    " exit",
    "exit",
    "",
  ].join("\n");
}

/** The router's kernel next hops for `prefix` (the FIB zebra installed from BGP), sorted. */
export async function routerNextHops(bgp: BgpLan, prefix: string): Promise<string[]> {
  const family = prefix.includes(":") ? "-6" : "-4";
  const text = await bgp.metal.lan.exec(bgp.routerHost, "ip", ["-j", family, "route", "show", prefix]);
  const routes = JSON.parse(text || "[]") as {
    gateway?: string;
    nexthops?: { gateway?: string }[];
  }[];
  return routes
    .flatMap((r) => (r.nexthops ? r.nexthops.map((h) => h.gateway) : [r.gateway]))
    .filter((g): g is string => typeof g === "string")
    .sort();
}
