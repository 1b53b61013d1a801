// BGP sessions as users see them: passwords from Secrets, sessions that never reset for unrelated changes, a
// stopping speaker that withdraws before it goes, and a wrong password or AS number said on the peer's status.
import { CoordinationV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { diagnose } from "../../../controller/cli/doctor.ts";
import { beforeAll, onTestFinished } from "vitest";
import { expect, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { requireLanTools, setCable } from "../../harness/netns.ts";
import { buildAddon, E2E_TIMEOUT_MS, type MetalNode } from "../metal/speakers.ts";
import { createBgpLan, routerNextHops, startBgpSpeakers, type BgpLan } from "./bgpCluster.ts";

const WEB = "198.51.100.20";
const EXTRA = Array.from({ length: 8 }, (_, i) => `198.51.100.${30 + i}`);
const POOL = ["198.51.100.0/24", "2001:db8:5::/64"];

beforeAll(async () => {
  requireLanTools(["/usr/lib/frr/bgpd", "vtysh"]);
  await buildAddon();
}, 180_000);

interface Neighbor {
  bgpState?: string;
  connectionsEstablished?: number;
}

async function routerSessions(bgp: BgpLan): Promise<Record<string, Neighbor>> {
  return bgp.router.json<Record<string, Neighbor>>("show bgp neighbors json");
}

type Sessions = Record<string, { state?: string; established?: boolean; lastError?: string }>;

async function peerSessions(cluster: TestCluster, name: string): Promise<Sessions> {
  const peer = (await cluster.kubeConfig.makeApiClient(CustomObjectsApi).getClusterCustomObject({
    group: "portico.io",
    version: "v1alpha1",
    plural: "bgppeers",
    name,
  })) as { status?: { sessions?: Sessions } };
  return peer.status?.sessions ?? {};
}

test(
  "a password from a Secret brings the sessions up; unrelated Services never reset one; a stopping speaker withdraws first",
  async ({ cluster }) => {
    await cluster.core.createNamespacedSecret({
      namespace: cluster.namespace,
      body: {
        metadata: { name: "router-password" },
        type: "kubernetes.io/basic-auth",
        stringData: { password: "s3cret-md5" },
      },
    });
    const bgp = await createBgpLan(cluster, {
      nodes: 3,
      addresses: [WEB, ...EXTRA],
      poolAddresses: POOL,
      onCleanup: onTestFinished,
      routerPassword: "s3cret-md5",
      peer: { passwordSecret: { name: "router-password" } },
      // Only configuration changes may reset a session here: BFD's 300 ms detection could also be tripped by
      // a machine busy with other tests, which is not what this test is about.
      bfd: false,
    });
    const { metal } = bgp;
    const [n0] = metal.nodes;
    await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-all`, {
      ipAddressPools: [bgp.pool.name],
    });
    await startBgpSpeakers(bgp);
    await metal.createService("web", [WEB]);
    const all = metal.nodes.map((n) => n.host.ipv4).sort();
    await waitFor(
      "the router to route the Service over every node",
      async () => (await routerNextHops(bgp, WEB)).join() === all.join(),
      { timeoutMs: 60_000 },
    );
    const before = await routerSessions(bgp);
    for (const n of metal.nodes) expect(before[n.host.ipv4]?.bgpState).toBe("Established");

    // Services come and go: each one only adds or removes routes, on sessions that stay up.
    for (const [i, address] of EXTRA.entries()) await metal.createService(`extra-${i}`, [address]);
    await waitFor(
      "every new Service to be routed over every node",
      async () => {
        const hops = await Promise.all(EXTRA.map((a) => routerNextHops(bgp, a)));
        return hops.every((h) => h.join() === all.join());
      },
      { timeoutMs: 60_000 },
    );
    for (let i = 0; i < 4; i++)
      await cluster.core.deleteNamespacedService({ name: `extra-${i}`, namespace: cluster.namespace });
    await waitFor("deleted Services to be withdrawn", async () => {
      const hops = await Promise.all(EXTRA.slice(0, 4).map((a) => routerNextHops(bgp, a)));
      return hops.every((h) => h.length === 0);
    });
    const after = await routerSessions(bgp);
    for (const n of metal.nodes) {
      expect(after[n.host.ipv4]?.bgpState).toBe("Established");
      expect(after[n.host.ipv4]?.connectionsEstablished).toBe(before[n.host.ipv4]?.connectionsEstablished);
    }

    // SIGTERM: the speaker has its node's FRR withdraw the routes before it exits; FRR stays up, its session
    // too, so the router drops the route only because it was withdrawn. The UPDATE reaches the router a moment
    // after FRR applied the change, hence the short wait.
    await n0!.terminate();
    const hops = await waitFor(
      `the router to drop ${n0!.host.ipv4} as a next hop`,
      async () => {
        const now = await routerNextHops(bgp, WEB);
        if (now.includes(n0!.host.ipv4)) throw new Error(`next hops ${now.join(", ")}`);
        return now;
      },
      { timeoutMs: 5000 },
    );
    expect(hops).toHaveLength(2);
    expect((await routerSessions(bgp))[n0!.host.ipv4]?.bgpState).toBe("Established");
  },
  E2E_TIMEOUT_MS,
);

/** A LAN without BFD whose one BGPAdvertisement selects the pool, speakers started, and web created. */
async function advertisingLan(
  cluster: TestCluster,
  options: { nodes: number; peer: Record<string, unknown>; routerPassword?: string },
): Promise<BgpLan> {
  const bgp = await createBgpLan(cluster, {
    ...options,
    addresses: [WEB],
    poolAddresses: POOL,
    onCleanup: onTestFinished,
    bfd: false,
  });
  await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-all`, {
    ipAddressPools: [bgp.pool.name],
  });
  await startBgpSpeakers(bgp);
  await bgp.metal.createService("web", [WEB]);
  return bgp;
}

/** Waits until the node's session on the peer's status is down for the reason `cause` matches. */
async function reportedDown(cluster: TestCluster, bgp: BgpLan, cause: RegExp): Promise<void> {
  const node = bgp.metal.nodes[0]!;
  await waitFor(`${node.name}'s session reported down (${cause.source})`, async () => {
    const session = (await peerSessions(cluster, bgp.peerNames[0]))[node.name];
    if (session?.established === false && cause.test(session.lastError ?? "")) return true;
    throw new Error(JSON.stringify(session));
  });
}

test(
  "a wrong password is said on the peer's status, and the session is not pretended up",
  async ({ cluster }) => {
    const bgp = await advertisingLan(cluster, {
      nodes: 1,
      routerPassword: "right",
      peer: { password: "wrong", connectTime: "1s" },
    });
    await reportedDown(cluster, bgp, /password/);
  },
  E2E_TIMEOUT_MS,
);

test(
  "a wrong AS number is said on the peer's status in FRR's words",
  async ({ cluster }) => {
    const bgp = await advertisingLan(cluster, { nodes: 1, peer: { peerASN: 64999, connectTime: "1s" } });
    await reportedDown(cluster, bgp, /Bad Peer AS/i);
    // porticoctl doctor explains why no router learned the address.
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
    const finding = findings.find((f) => f.check === "BGP");
    expect(finding?.result).toBe("bad");
    expect(finding?.detail).toContain(`no router learned ${WEB}: no BGP session is established`);
    expect(finding?.detail).toMatch(/Bad Peer AS/);
  },
  E2E_TIMEOUT_MS,
);

test(
  "without BFD, a node cut off is withdrawn when the hold timer expires",
  async ({ cluster }) => {
    // The session's hold time is the lower of the two sides' (the router offers 9 s).
    const bgp = await advertisingLan(cluster, { nodes: 2, peer: { holdTime: "3s", keepaliveTime: "1s" } });
    const [n0, n1] = bgp.metal.nodes as [MetalNode, MetalNode];
    await waitFor("both nodes as next hops", async () => (await routerNextHops(bgp, WEB)).length === 2, {
      timeoutMs: 60_000,
    });
    await setCable(n0.host, false);
    await waitFor(
      "the cut-off node withdrawn by the hold timer",
      async () => (await routerNextHops(bgp, WEB)).join() === n1.host.ipv4,
      { timeoutMs: 30_000 },
    );
    const neighbor = (await routerSessions(bgp))[n0.host.ipv4];
    expect(neighbor?.bgpState).not.toBe("Established");
  },
  E2E_TIMEOUT_MS,
);
