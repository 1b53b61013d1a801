// `make bench-bgp`, the BGP mode. The LAN of the BGP tests (test/integration/bgp): node namespaces each with
// the real speaker and its own FRR, a router namespace running FRR that peers with every node (iBGP, ECMP) and
// a client behind the router. Measured:
// - failover at the client: a node's cable is pulled at the switch (the node, its speaker and its FRR all
//   vanish at once, as a dead server would) while the client opens a new connection every 10 ms; how long new
//   connections keep failing, and when the router's kernel dropped the node's next hop. With BFD (100 ms x 3)
//   and without (the hold timer, 9 s), each over BENCH_BGP_TRIALS pulls.
// - advertising at size: BENCH_BGP_SERVICES Services exist with their addresses (and ready endpoints); one
//   BGPAdvertisement then selects their pool, and the clock runs until the router holds every address over
//   every node. Then one more Service is added: the time until it is routed, while the others stay.
// Needs root.
import { loadavg } from "node:os";
import { startEnvironment } from "../test/harness/environment.ts";
import { mergePatch, TestCluster } from "../test/harness/kube.ts";
import { requireLanTools, setCable } from "../test/harness/netns.ts";
import { waitFor } from "../test/harness/wait.ts";
import { TcpProber } from "../test/integration/metal/clients.ts";
import { buildAddon, SERVICE_PORT } from "../test/integration/metal/speakers.ts";
import {
  createBgpLan,
  routerNextHops,
  startBgpSpeakers,
  type BgpLan,
} from "../test/integration/bgp/bgpCluster.ts";
import { percentile, report, sleep } from "./report.ts";

const NODES = Number(process.env.BENCH_BGP_NODES ?? 3);
const TRIALS = Number(process.env.BENCH_BGP_TRIALS ?? 10);
const SERVICES = Number(process.env.BENCH_BGP_SERVICES ?? 1000);
const PROBE_INTERVAL_MS = 10;
const V4 = "198.51.100.10";
/** 100.64.0.0/22: 1,024 addresses for the size phase. */
const SIZE_POOL = "100.64.0.0/22";

const progress = (what: string) => process.stderr.write(`  ${what}...\n`);

export async function benchBgp(): Promise<Record<string, unknown>> {
  requireLanTools(["/usr/lib/frr/bgpd", "vtysh"]);
  const loadBefore = loadavg()[0]!;
  await buildAddon();
  const env = await startEnvironment({ awsEndpoints: 0 });
  const cleanups: (() => Promise<void>)[] = [];
  try {
    process.env.KUBECONFIG = env.controlPlane.kubeconfig;
    const results: Record<string, unknown> = {};
    for (const bfd of [true, false]) {
      const cluster = await TestCluster.create(
        env.controlPlane.kubeconfig,
        `bench-bgp-${bfd ? "bfd" : "hold"}`,
      );
      const phase: (() => Promise<void>)[] = [() => cluster.cleanup()];
      try {
        progress(`${NODES} nodes, a router and a client; BFD ${bfd ? "on" : "off"}`);
        const bgp = await lan(cluster, bfd, (fn) => phase.push(fn));
        progress(`${TRIALS} cable pulls`);
        results[bfd ? "failoverWithBfd" : "failoverWithoutBfd"] = await failovers(bgp, bfd);
        if (bfd) {
          progress(`${SERVICES} Services advertised at once`);
          results.atSize = await atSize(cluster, bgp);
        }
      } finally {
        for (const fn of phase.reverse()) await fn().catch((err: unknown) => console.error("clean-up:", err));
      }
    }
    return {
      ...results,
      goal: "failover with BFD p99 < 500 ms at the client; 1000 addresses advertised within 10 s; no session reset by unrelated changes",
      loadAverage: { before: +loadBefore.toFixed(2), after: +loadavg()[0]!.toFixed(2) },
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => console.error("clean-up:", err));
    await env.stop();
  }
}

async function lan(
  cluster: TestCluster,
  bfd: boolean,
  onCleanup: (fn: () => Promise<void>) => void,
): Promise<BgpLan> {
  const bgp = await createBgpLan(cluster, {
    nodes: NODES,
    addresses: [V4],
    poolAddresses: ["198.51.100.0/24", SIZE_POOL],
    onCleanup,
    bfd,
  });
  await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-web`, {
    ipAddressPools: [bgp.pool.name],
    serviceSelectors: [{ matchLabels: { bench: "web" } }],
  });
  await startBgpSpeakers(bgp);
  await bgp.metal.createService("web", [V4]);
  await cluster.core.patchNamespacedService(
    { name: "web", namespace: cluster.namespace, body: { metadata: { labels: { bench: "web" } } } },
    mergePatch,
  );
  await allRouted(bgp, V4, 60_000);
  return bgp;
}

async function allRouted(bgp: BgpLan, address: string, timeoutMs: number): Promise<void> {
  const all = bgp.metal.nodes
    .map((n) => n.host.ipv4)
    .sort()
    .join();
  await waitFor(
    `${address} routed over every node`,
    async () => (await routerNextHops(bgp, address)).join() === all,
    {
      timeoutMs,
    },
  );
}

async function failovers(bgp: BgpLan, bfd: boolean) {
  const prober = new TcpProber(
    bgp.metal.lan,
    bgp.client,
    [{ address: V4, port: SERVICE_PORT }],
    PROBE_INTERVAL_MS,
  );
  const clientMs: number[] = [];
  const routerMs: number[] = [];
  let failedConnections = 0;
  try {
    await waitFor("the client to be answered", () => prober.lastAnswer(V4) !== undefined);
    for (let trial = 0; trial < TRIALS; trial++) {
      const node = bgp.metal.nodes[trial % bgp.metal.nodes.length]!;
      const cut = Date.now();
      await setCable(node.host, false);
      // The router's kernel drops the node's next hop once BFD (or the hold timer) tells bgpd the peer is gone.
      for (;;) {
        const hops = await routerNextHops(bgp, V4);
        if (!hops.includes(node.host.ipv4)) break;
        if (Date.now() - cut > 60_000)
          throw new Error(`${node.name} still a next hop 60 s after its cable was pulled`);
        await sleep(5);
      }
      routerMs.push(Date.now() - cut);
      // Connections started before the withdrawal may still be timing out (300 ms): let them finish.
      await sleep(1000);
      const failed = prober.results.filter((r) => r.start >= cut && r.error);
      failedConnections += failed.length;
      clientMs.push(failed.length ? Math.max(...failed.map((r) => r.start)) - cut + PROBE_INTERVAL_MS : 0);
      await setCable(node.host, true);
      await allRouted(bgp, V4, 120_000);
      // The next pull is detected by BFD only once the node's BFD session is up again (it follows BGP's).
      if (bfd)
        await waitFor(
          `${node.name}'s BFD session up at the router`,
          async () => {
            const peers = await bgp.router.json<{ peer?: string; status?: string }[]>("show bfd peers json");
            return peers.some((p) => p.peer === node.host.ipv4 && p.status === "up");
          },
          { timeoutMs: 60_000 },
        );
    }
  } finally {
    await prober.stop();
  }
  return {
    trials: TRIALS,
    clientP50Ms: percentile(clientMs, 50),
    clientP99Ms: percentile(clientMs, 99),
    clientMaxMs: Math.max(...clientMs),
    routerP50Ms: percentile(routerMs, 50),
    routerP99Ms: percentile(routerMs, 99),
    failedConnections,
    connectionsPerSecond: 1000 / PROBE_INTERVAL_MS,
  };
}

async function atSize(cluster: TestCluster, bgp: BgpLan) {
  const base = 0x64400000; // 100.64.0.0
  const address = (i: number) =>
    [base >>> 24, (base >>> 16) & 255, ((base + i) >>> 8) & 255, (base + i) & 255].join(".");
  const names = Array.from({ length: SERVICES }, (_, i) => `size-${i}`);
  // Created before any advertisement selects them: what is timed is the speakers' and FRR's work, not the API's.
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(
      names
        .slice(i, i + 20)
        .map((name, j) =>
          bgp.metal.createService(name, [address(i + j)], { endpointNodes: [bgp.metal.nodes[0]!] }),
        ),
    );
  }
  const expected = SERVICES + 1; // and web's
  const received = async () => {
    const summary = await bgp.router.json<{ ipv4Unicast?: { peers?: Record<string, { pfxRcd?: number }> } }>(
      "show bgp summary json",
    );
    const peers = summary.ipv4Unicast?.peers ?? {};
    return bgp.metal.nodes.map((n) => peers[n.host.ipv4]?.pfxRcd ?? 0);
  };
  const start = Date.now();
  await bgp.create("bgpadvertisements", "BGPAdvertisement", `${cluster.namespace}-size`, {
    ipAddressPools: [bgp.pool.name],
  });
  await waitFor(
    `${SERVICES} addresses at the router from every node`,
    async () => (await received()).every((count) => count >= expected),
    { timeoutMs: 600_000, intervalMs: 100 },
  );
  const allAdvertisedMs = Date.now() - start;
  const sessionsBefore =
    await bgp.router.json<Record<string, { connectionsEstablished?: number }>>("show bgp neighbors json");
  const one = Date.now();
  await bgp.metal.createService("one-more", [address(SERVICES)], { endpointNodes: [bgp.metal.nodes[0]!] });
  await allRouted(bgp, address(SERVICES), 60_000);
  const oneMoreMs = Date.now() - one;
  const sessionsAfter =
    await bgp.router.json<Record<string, { connectionsEstablished?: number }>>("show bgp neighbors json");
  const resets = bgp.metal.nodes.filter(
    (n) =>
      sessionsAfter[n.host.ipv4]?.connectionsEstablished !==
      sessionsBefore[n.host.ipv4]?.connectionsEstablished,
  ).length;
  return {
    services: SERVICES,
    nodes: NODES,
    allAdvertisedMs,
    oneMoreServiceMs: oneMoreMs,
    sessionResets: resets,
  };
}

if (import.meta.main) await report("bgp", benchBgp);
