// The BGP mode on the local cluster, as users run it: the metal overlay's speaker pods with their FRR and FRR
// agent containers (the stand-in FRR image test/env/images.sh builds from Debian's frr 8.4), configured only
// through a BGPPeer and a BGPAdvertisement. A router namespace on the LAN runs its own FRR (the BGP tests'
// FrrInstance) that every node peers with; a LoadBalancer Service's address, from a pool off the LAN, is
// routed by the router over every node (ECMP), and a client behind the router, which has no other way there,
// reaches the workload pods through the nodes' kube-proxy.
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { Address4 } from "ip-address";
import { onTestFinished } from "vitest";
import { BEHIND, nextHops, ROUTER, ROUTER_ASN, startRouter } from "../harness/bgpRouter.ts";
import { clientGet, describe, expect, test, testLogDir, waitFor, type EchoAnswer } from "../harness/e2e.ts";
import { rollOut } from "../harness/localCluster/rollout.ts";
import { IP, sh } from "../harness/netns.ts";

/** TEST-NET-2, off the LAN: reached only through the routes the router learned. */
const POOL = "198.51.100.0/28";
const API = { group: "portico.io", version: "v1alpha1" } as const;

/** Creates a cluster-scoped Portico object, deleted when the test ends. */
async function create(
  kc: KubeConfig,
  plural: string,
  kind: string,
  name: string,
  spec: object,
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({
    ...API,
    plural,
    body: { apiVersion: `${API.group}/${API.version}`, kind, metadata: { name }, spec },
  });
  onTestFinished(async () => {
    await custom.deleteClusterCustomObject({ ...API, plural, name }).catch(() => undefined);
  });
}

describe("the BGP mode on the local cluster", () => {
  test("a router peering with every node routes a Service's address over all of them, and HTTP from behind it reaches the pods", async ({
    ns,
  }) => {
    const logDir = testLogDir("bgp");
    const router = await startRouter(
      ns.context.client.switchPort.namespace,
      ns.context.nodes.map((n) => n.host.ipv4),
      logDir,
      onTestFinished,
    );
    // Replies to the client behind the router go back through it, as a node's default route would take them.
    for (const node of ns.context.nodes) {
      const route = ["route", "add", BEHIND, "via", ROUTER.ipv4];
      await sh(IP, ["-n", node.host.namespace, ...route]);
      onTestFinished(() => sh(IP, ["-n", node.host.namespace, "route", "del", BEHIND]).then(() => undefined));
    }

    // What a user writes: a pool only the Services that name it draw from, a peer for every node, and an
    // advertisement of the pool to every peer (MetalLB's shapes).
    const pool = `${ns.name}-bgp`;
    await create(ns.kc, "ipaddresspools", "IPAddressPool", pool, { addresses: [POOL], autoAssign: false });
    await create(ns.kc, "bgppeers", "BGPPeer", `${ns.name}-router`, {
      myASN: ROUTER_ASN,
      peerASN: ROUTER_ASN,
      peerAddress: ROUTER.ipv4,
      // The nodes' bgpd listens on no port: they open the sessions, so a first attempt's failure is retried soon.
      connectTime: "2s",
      // The router keeps a node's routes while its speaker's pod is replaced (the rollout at the end).
      enableGracefulRestart: true,
    });
    await create(ns.kc, "bgpadvertisements", "BGPAdvertisement", pool, { ipAddressPools: [pool] });

    await ns.deployEcho("echo", 3, { spread: true });
    await ns.createLoadBalancer("web", "echo", {}, { "portico.io/address-pool": pool });
    await ns.createLoadBalancer(
      "local",
      "echo-local",
      { externalTrafficPolicy: "Local" },
      { "portico.io/address-pool": pool },
    );
    await ns.deployEcho("echo-local", 1);
    const [web, local] = [await ns.waitForAddress("web"), await ns.waitForAddress("local")];
    for (const address of [web, local])
      expect(new Address4(address).isInSubnet(new Address4(POOL))).toBe(true);

    // Every node's session is up and the address is routed over all three nodes.
    const nodes = ns.context.nodes.map((n) => n.host.ipv4).sort();
    await waitFor(
      `the router to route ${web} over every node (${nodes.join(", ")})`,
      async () => {
        const hops = await nextHops(router.host, web);
        if (hops.join() === nodes.join()) return true;
        const sessions =
          await router.frr.json<Record<string, { bgpState?: string }>>("show bgp neighbors json");
        throw new Error(
          `next hops ${hops.join(", ") || "none"}; sessions ${Object.entries(sessions)
            .map(([peer, s]) => `${peer} ${s.bgpState}`)
            .join(", ")}`,
        );
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // Each speaker reports its node's session on the peer (the agents read FRR's sessions every 5 s).
    await waitFor(
      "every node's session established on the BGPPeer's status",
      async () => {
        const peer = (await ns.kc.makeApiClient(CustomObjectsApi).getClusterCustomObject({
          ...API,
          plural: "bgppeers",
          name: `${ns.name}-router`,
        })) as { status?: { sessions?: Record<string, { established?: boolean }> } };
        const sessions = peer.status?.sessions ?? {};
        const up = Object.keys(sessions).filter((n) => sessions[n]?.established);
        return up.length === ns.context.nodes.length || undefined;
      },
      { timeoutMs: 30_000 },
    );

    // HTTP from behind the router: every request is answered, by all three pods (kube-proxy takes what any
    // node receives to any pod).
    await ns.waitAvailable("echo");
    const behind = { ...ns.context, client: router.behind };
    const pods = new Set<string>();
    let failed = 0;
    await waitFor(
      `answers from all three pods at http://${web}/ from behind the router`,
      async () => {
        const answer = await clientGet(behind, `http://${web}/`);
        if (answer) pods.add(answer.pod);
        else failed += 1;
        return pods.size === 3 || undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    expect(failed).toBe(0);

    // externalTrafficPolicy Local: routed only to the node of its one pod, which sees the client's own address.
    await ns.waitAvailable("echo-local");
    const [pod] = (await ns.core.listNamespacedPod({ namespace: ns.name, labelSelector: "app=echo-local" }))
      .items;
    const endpointNode = ns.context.nodes.find((n) => n.layout.name === pod!.spec!.nodeName);
    await waitFor(`${local} routed over ${pod!.spec!.nodeName} only`, async () => {
      const hops = await nextHops(router.host, local);
      return hops.join() === endpointNode?.host.ipv4 || undefined;
    });
    const answer = await waitFor<EchoAnswer>(`an answer at http://${local}/`, () =>
      clientGet(behind, `http://${local}/`),
    );
    expect(answer.client.split(":")[0]).toBe(router.behind.ipv4);

    // A rolling update of the speakers: each pod's FRR ends its session without a NOTIFICATION and the router,
    // restarting gracefully with it, keeps the node's routes until the new pod's FRR has advertised them again.
    // Sampled every 100 ms, the address is routed over all three nodes throughout; the router's count of
    // sessions established with each node shows that each was replaced.
    const established = async () => {
      const sessions =
        await router.frr.json<Record<string, { connectionsEstablished?: number }>>("show bgp neighbors json");
      return new Map(nodes.map((n) => [n, sessions[n]?.connectionsEstablished ?? 0] as const));
    };
    const before = await established();
    const samples: string[][] = [];
    let rolling = true;
    const sampling = (async () => {
      while (rolling) {
        samples.push(await nextHops(router.host, web));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await rollOut(ns.kc, "DaemonSet", "portico-speaker", "portico-system", 240_000);
      await waitFor(
        "every node's session with the router established again",
        async () => {
          const now = await established();
          return nodes.every((n) => now.get(n)! > before.get(n)!) || undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    } finally {
      rolling = false;
      await sampling;
    }
    const short = samples.filter((hops) => hops.join() !== nodes.join());
    expect(samples.length).toBeGreaterThan(20);
    expect(short.length, `of ${samples.length} samples, e.g. ${JSON.stringify(short.slice(0, 3))}`).toBe(0);
  });
});
