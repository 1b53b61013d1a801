// BGP mode against a real router: every node's speaker drives its own FRR, the router's FRR peers with all of
// them, and a client behind the router reaches Services only through what the router learned.
import { CoordinationV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { diagnose } from "../../../controller/cli/doctor.ts";
import { beforeAll, onTestFinished } from "vitest";
import { expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { TcpProber } from "../metal/clients.ts";
import { buildAddon, E2E_TIMEOUT_MS, SERVICE_PORT, type MetalNode } from "../metal/speakers.ts";
import { createBgpLan, routerNextHops, startBgpSpeakers } from "./bgpCluster.ts";

const WEB = "198.51.100.10";
const LOCAL = "198.51.100.11";
const TAGGED = "198.51.100.12";
const WEB6 = "2001:db8:5::10";

beforeAll(async () => {
  requireLanTools(["/usr/lib/frr/bgpd", "vtysh"]);
  await buildAddon();
}, 180_000);

test(
  "ECMP from every node, Local from endpoint nodes only, attributes reach the router, HTTP through it, a cordoned node withdrawn until uncordoned, a killed node withdrawn",
  async ({ cluster }) => {
    const bgp = await createBgpLan(cluster, {
      nodes: 3,
      addresses: [WEB, LOCAL, TAGGED, WEB6],
      poolAddresses: ["198.51.100.0/24", "2001:db8:5::/64"],
      onCleanup: onTestFinished,
    });
    const { metal } = bgp;
    const [n0, n1, n2] = metal.nodes as [
      (typeof metal.nodes)[0],
      (typeof metal.nodes)[0],
      (typeof metal.nodes)[0],
    ];
    await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-all`, {
      ipAddressPools: [bgp.pool.name],
      peers: [...bgp.peerNames],
    });
    await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-tagged`, {
      ipAddressPools: [bgp.pool.name],
      serviceSelectors: [{ matchLabels: { tagged: "yes" } }],
      communities: ["65000:100", "large:64512:1:2"],
      localPref: 150,
    });
    await startBgpSpeakers(bgp);
    await metal.createService("web", [WEB, WEB6], { endpointNodes: [n0] });
    await metal.createService("local", [LOCAL], { local: true, endpointNodes: [n1] });
    await metal.createService("tagged", [TAGGED], { endpointNodes: [n2] });
    await cluster.core.patchNamespacedService(
      { name: "tagged", namespace: cluster.namespace, body: { metadata: { labels: { tagged: "yes" } } } },
      mergePatch,
    );

    const all = metal.nodes.map((n) => n.host.ipv4).sort();
    await waitFor(
      "the router to route the Cluster Service over every node (ECMP)",
      async () => {
        const hops = await routerNextHops(bgp, WEB);
        if (hops.join() === all.join()) return true;
        throw new Error(`next hops ${hops.join(", ") || "none"}`);
      },
      { timeoutMs: 60_000 },
    );
    await waitFor(
      "the router to route the IPv6 address over every node",
      async () => {
        const hops = await routerNextHops(bgp, WEB6);
        return hops.length === 3;
      },
      { timeoutMs: 60_000 },
    );
    await waitFor("the Local Service to be routed to its endpoint's node only", async () => {
      const hops = await routerNextHops(bgp, LOCAL);
      return hops.join() === n1.host.ipv4;
    });
    // No BGP-only pool address is answered over ARP: the pool is announced in BGP mode only.
    expect(metal.nodes.flatMap((n) => n.owned)).toEqual([]);

    // Communities, large communities and local preference as the router received them.
    await waitFor("the tagged route's attributes at the router", async () => {
      const route = await bgp.router.json<{
        paths?: { community?: { string?: string }; largeCommunity?: { string?: string }; locPrf?: number }[];
      }>(`show bgp ipv4 unicast ${TAGGED}/32 json`);
      const paths = route.paths ?? [];
      return (
        paths.length === 3 &&
        paths.every(
          (p) =>
            p.community?.string === "65000:100" &&
            p.largeCommunity?.string === "64512:1:2" &&
            p.locPrf === 150,
        )
      );
    });
    const plain = await bgp.router.json<{ paths?: { community?: unknown; locPrf?: number }[] }>(
      `show bgp ipv4 unicast ${WEB}/32 json`,
    );
    expect(plain.paths?.every((p) => p.community === undefined && p.locPrf === 100)).toBe(true);

    // Each node records that it advertises web, to which peers (ServiceBGPStatus, owned by the Service).
    await waitFor("every node's ServiceBGPStatus for web", async () => {
      const list = (await cluster.kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: "portico.io",
        version: "v1alpha1",
        plural: "servicebgpstatuses",
        namespace: cluster.namespace,
      })) as {
        items: { status?: { node?: string; serviceName?: string; peers?: string[]; addresses?: string[] } }[];
      };
      const web = list.items.filter((r) => r.status?.serviceName === "web");
      return (
        web.length === 3 &&
        web.every(
          (r) =>
            r.status?.peers?.join() === [...bgp.peerNames].sort().join() &&
            r.status?.addresses?.join() === [WEB, WEB6].join(),
        )
      );
    });

    const findings = await diagnose(
      {
        core: cluster.core,
        discovery: cluster.discovery,
        coordination: cluster.kubeConfig.makeApiClient(CoordinationV1Api),
        custom: cluster.kubeConfig.makeApiClient(CustomObjectsApi),
      },
      { namespace: cluster.namespace, name: "web" },
      { controllerNamespace: cluster.namespace },
    );
    expect(findings.find((f) => f.check === "BGP")).toMatchObject({
      result: "ok",
      detail: `${WEB}, ${WEB6} advertised by ${metal.nodes
        .map((n) => n.name)
        .sort()
        .join(", ")} to ${[...bgp.peerNames].sort().join(", ")}`,
    });

    // HTTP (TCP) from behind the router: new connections spread over the nodes, and all are answered.
    const prober = new TcpProber(metal.lan, bgp.client, [{ address: WEB, port: SERVICE_PORT }], 20);
    await waitFor("connections from behind the router to reach all three nodes", () => {
      const answers = new Set(prober.results.filter((r) => r.answer).map((r) => r.answer));
      return answers.size === 3;
    });
    const before = prober.results.length;
    await waitFor("ten more connections", () => prober.results.length >= before + 10);
    const steady = prober.results.slice(before);
    expect(steady.filter((r) => r.error)).toEqual([]);

    // A node cordoned for a drain withdraws its paths before its pods go, and takes them up again once
    // uncordoned.
    const cordon = (unschedulable: boolean) =>
      cluster.core.patchNode({ name: n0.name, body: { spec: { unschedulable } } }, mergePatch);
    const webHops = (nodes: MetalNode[]) => async () =>
      (await routerNextHops(bgp, WEB)).join() ===
      nodes
        .map((n) => n.host.ipv4)
        .sort()
        .join();
    await cordon(true);
    await waitFor("the cordoned node's next hop to be withdrawn", webHops([n1, n2]));
    await cordon(false);
    await waitFor("the uncordoned node's next hop back", webHops([n0, n1, n2]));

    // The Local Service follows its endpoint.
    await metal.moveEndpoint("local", n2);
    await waitFor("the Local route to follow its endpoint to another node", async () => {
      return (await routerNextHops(bgp, LOCAL)).join() === n2.host.ipv4;
    });

    // A node dies (speaker and FRR killed at once): BFD tells the router, which drops it from the paths.
    await Promise.all([n2.process!.kill(), bgp.frr.get(n2.name)!.kill()]);
    await waitFor(
      "the dead node's next hop to be withdrawn",
      async () => {
        const hops = await routerNextHops(bgp, WEB);
        return hops.join() === [n0.host.ipv4, n1.host.ipv4].sort().join();
      },
      { timeoutMs: 15_000 },
    );
    // Connections begun once the router had withdrawn it: one already under way to the dead node may time out.
    const withdrawnAt = Date.now();
    const begunSince = () => prober.results.filter((r) => r.start >= withdrawnAt);
    await waitFor("ten connections begun since", () => begunSince().length >= 10);
    expect(begunSince().filter((r) => r.error)).toEqual([]);
    await prober.stop();

    // The status users read: each node's session on the BGPPeer.
    await waitFor("the peer's status to show the live nodes' sessions established", async () => {
      const peer = (await cluster.kubeConfig.makeApiClient(CustomObjectsApi).getClusterCustomObject({
        group: "portico.io",
        version: "v1alpha1",
        plural: "bgppeers",
        name: bgp.peerNames[0],
      })) as {
        status?: { sessions?: Record<string, { established?: boolean; bfd?: string }> };
      };
      const sessions = peer.status?.sessions ?? {};
      return [n0, n1].every((n) => sessions[n.name]?.established === true && sessions[n.name]?.bfd === "up");
    });
  },
  E2E_TIMEOUT_MS,
);
