// `make bench-speaker`, the bare-metal speaker. A LAN of network namespaces (test/integration/metal): node
// namespaces each running the real speaker against the real apiserver, and a client namespace that measures
// the speaker's ARP and NDP reply latency next to the kernel's own, the failover time after a SIGKILL and the
// hand-over time after a SIGTERM, and what an ARP flood costs the announcing speaker. Needs root. Meanwhile a
// client asks for the address over ARP every 10 ms and tcpdump timestamps every request and reply in the
// kernel: answered/asked and reply latency in a quiet stretch, and per address move (SIGKILL, restart,
// SIGTERM, relabel) the longest time with no answer and the requests answered by two nodes. Then every core is
// saturated by other processes for ten minutes: no address may move and no speaker be declared dead meanwhile,
// and a speaker SIGKILLed while the machine is still saturated must be failed over.
import { loadavg } from "node:os";
import { addonPath } from "../speaker/io/addon.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { requireLanTools } from "../test/harness/netns.ts";
import { installPoolCrd } from "../test/harness/pools.ts";
import { waitFor } from "../test/harness/wait.ts";
import { measureFailover, sendRawFrames, TcpProber } from "../test/integration/metal/clients.ts";
import { ArpRecorder } from "../test/integration/metal/arpRecorder.ts";
import { exchangeFigures } from "../test/integration/metal/exchanges.ts";
import { measureAtSize } from "../test/integration/metal/atSize.ts";
import { MoveLog, poolEditMoves, relabelMoves } from "../test/integration/metal/moves.ts";
import { measureSaturation } from "../test/integration/metal/saturation.ts";
import { measureSteady } from "../test/integration/metal/steady.ts";
import {
  buildAddon,
  useCompiledSpeaker,
  MetalCluster,
  SERVICE_PORT,
  TAKEOVER_BURST_MS,
  type MetalNode,
} from "../test/integration/metal/speakers.ts";
import { report, sleep } from "./report.ts";
import { arpFlood, idleCpu, sendPaced, speakerPid } from "./speakerCost.ts";
import { arpLatency, ndpLatency, summary } from "./speakerLatency.ts";

const SPEAKERS = Number(process.env.BENCH_SPEAKERS ?? 3);
const REQUESTS = Number(process.env.BENCH_ARP_REQUESTS ?? 200);
const SOLICITATIONS = Number(process.env.BENCH_NDP_REQUESTS ?? 50);
const FAILOVERS = Number(process.env.BENCH_FAILOVERS ?? 10);
const HANDOVERS = Number(process.env.BENCH_HANDOVERS ?? 3);
const RELABELS = Number(process.env.BENCH_RELABELS ?? 3);
/**
 * Last, the speakers at size: this many more Services and Nodes (Nodes without a speaker); 0 leaves the phase
 * out. The benchmark's own API clients then need more than 1,024 open files (make raises the soft limit to the
 * hard one).
 */
const SIZE_SERVICES = Number(process.env.BENCH_SIZE_SERVICES ?? 1000);
const SIZE_NODES = Number(process.env.BENCH_SIZE_NODES ?? 100);
/** The client's ARP requests: 100 a second, for this long without moves, then throughout the moves. */
const ASK_INTERVAL_MS = 10;
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 30);
/** The figures measured before make-before-break, printed beside the new ones for comparison. */
const BASELINE =
  "before: every hand-back 505-526 ms without any answer; 3/1981 requests unanswered at 100/s; ARP reply p50 0.55 ms (kernel timestamps); " +
  "with both cores saturated by 8 busy loops for 10 min, 12 speakers declared dead and 24 address moves (silence alone judged them)";
/** A flood at a set rate: the speaker's cost per request. Above --max-replies-per-second (5000), to see it limit. */
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 10_000);
const FLOOD_SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 10);
/** Then as fast as the client sends: whether the address stays when the machine is saturated. */
const FLOOD_FRAMES = Number(process.env.BENCH_FLOOD_FRAMES ?? 300_000);
/**
 * Both cores kept busy by other processes (busy loops at normal priority, BENCH_SATURATION_HOGS of them, four per
 * core by default) for this long: no address may move and no speaker be declared dead; then a SIGKILL, still
 * saturated, must be failed over.
 */
const SATURATION_SECONDS = Number(process.env.BENCH_SATURATION_SECONDS ?? 600);
const SATURATION_HOGS = Number(process.env.BENCH_SATURATION_HOGS ?? 0) || undefined;
/** How often the client connects: the resolution of the failover times. */
const PROBE_INTERVAL_MS = Number(process.env.BENCH_PROBE_INTERVAL_MS ?? 20);
/** After a stopped speaker is back and alive for every other: time to decide, and to move were it to. */
const RESTART_SETTLE_MS = 2_000;
/** As deployed: the tests log at debug, which would log every answer and inflate latency and CPU. */
const SPEAKER_ARGS = ["--log-level=info"];

const V4 = "192.0.2.200";
const V6 = "2001:db8::200";

const progress = (what: string) => process.stderr.write(`  ${what}...\n`);

export async function benchSpeaker(): Promise<Record<string, unknown>> {
  requireLanTools(["arping", "ndisc6", "tcpdump"]);
  // Latencies and CPU shares depend on what else the machine runs; the load says how quiet it was.
  const loadBefore = loadavg()[0]!;
  await buildAddon();
  await useCompiledSpeaker();
  const env = await startEnvironment({ awsEndpoints: 0 });
  // Run in reverse: the LAN (and every process in it) goes before the Nodes, the environment last.
  const cleanups: (() => Promise<void>)[] = [];
  try {
    // MetalCluster hands this kubeconfig to the speakers.
    process.env.KUBECONFIG = env.controlPlane.kubeconfig;
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench-speaker");
    cleanups.push(() => cluster.cleanup());
    progress(`${SPEAKERS} node namespaces and their speakers`);
    const metal = await MetalCluster.create(cluster, {
      nodes: SPEAKERS,
      addresses: [V4, V6],
      onCleanup: (fn) => cleanups.push(fn),
    });
    // Before the speakers start: they look for a missing pool CRD again only every 30 s.
    await installPoolCrd(cluster);
    await metal.startSpeakers(SPEAKER_ARGS);
    await metal.createService("web", [V4, V6]);
    const elected = metal.electedFor(V4);
    const elected6 = metal.electedFor(V6);
    await waitFor("the elected nodes alone to announce", () => {
      const [a4, a6] = [metal.announcersOf(V4), metal.announcersOf(V6)];
      return a4.length === 1 && a4[0] === elected && a6.length === 1 && a6[0] === elected6;
    });
    // The takeover's gratuitous burst is over before anything is measured.
    await sleep(TAKEOVER_BURST_MS);

    progress(`ARP: ${REQUESTS} requests each to the speaker and to the kernel`);
    const arp = await arpLatency(metal, elected, V4, REQUESTS);
    progress(`NDP: ${SOLICITATIONS} solicitations each to the speaker and to the kernel`);
    const ndp = await ndpLatency(metal, elected6, V6, SOLICITATIONS);

    const recorder = new ArpRecorder(metal.lan, metal.lan.client, V4, {
      intervalMs: ASK_INTERVAL_MS,
      kernelTimestamps: true,
    });
    cleanups.push(() => recorder.stop());
    await recorder.start();
    progress(`ARP every ${ASK_INTERVAL_MS} ms for ${STEADY_SECONDS} s, timestamped by the kernel`);
    const steady = await measureSteady(
      recorder,
      { host: elected.host, pid: speakerPid(elected) },
      STEADY_SECONDS,
    );
    const moves = new MoveLog(recorder);

    const prober = new TcpProber(
      metal.lan,
      metal.lan.client,
      [{ address: V4, port: SERVICE_PORT }],
      PROBE_INTERVAL_MS,
    );
    progress(`${FAILOVERS} SIGKILLs of the announcing speaker`);
    const failover = await failovers(metal, prober, FAILOVERS, moves, "Sigkill", (n) => n.kill());
    progress(`${HANDOVERS} SIGTERMs of the announcing speaker`);
    const handover = await failovers(metal, prober, HANDOVERS, moves, "Sigterm", (n) => n.terminate());
    await prober.stop();
    // Before the relabels and pool edits, which leave the address in a pool only its elected node may announce.
    progress(`every core saturated by other processes for ${SATURATION_SECONDS} s, then a SIGKILL`);
    const saturation = await saturated(metal, recorder);
    // Failovers leave the address on whichever node took it last: that one is measured from here on.
    const announcing = await soleAnnouncer(metal);
    progress(`${RELABELS} relabels of the announcing node, away and back`);
    await relabelMoves(metal, announcing, V4, RELABELS, moves);
    progress(`${RELABELS} edits of the address's pool, away and back`);
    await poolEditMoves(metal, announcing, V4, RELABELS, moves);
    await recorder.stop();

    progress("the announcing speaker idle");
    const idle = await idleCpu(announcing);
    progress(`ARP flood at ${FLOOD_RATE}/s for ${FLOOD_SECONDS} s`);
    const client = metal.lan.client;
    const paced = await arpFlood(metal, announcing, V4, (frame) =>
      sendPaced(metal.lan, client, frame, FLOOD_RATE, FLOOD_SECONDS),
    );
    progress(`ARP flood of ${FLOOD_FRAMES} requests as fast as they go out`);
    const saturating = await arpFlood(metal, announcing, V4, (frame) =>
      sendRawFrames(metal.lan, client, addonPath(), [frame], FLOOD_FRAMES),
    );
    let atSize;
    if (SIZE_SERVICES > 0) {
      progress(`${SIZE_SERVICES} more Services and ${SIZE_NODES} more Nodes`);
      atSize = await measureAtSize(metal, { services: SIZE_SERVICES, nodes: SIZE_NODES }, speakerPid);
    }
    return {
      speakers: SPEAKERS,
      loadAverage: `${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after (1 min)`,
      arpReplyLatency: arp,
      ndpReplyLatency: ndp,
      arpAt100PerSecond: steady,
      addressMoves: moves.summary(),
      failoverAfterSigkill: failover,
      handoverAfterSigterm: handover,
      announcerIdle: idle,
      arpFlood: paced,
      arpFloodSaturating: saturating,
      cpuSaturation: saturation,
      ...(atSize ? { speakersAtSize: atSize } : {}),
      note: BASELINE,
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => console.error("clean-up:", err));
    await env.stop();
  }
}

/**
 * Stops the announcing speaker `times` over (`stop`: SIGKILL or SIGTERM) and measures how long the client's
 * connections take to reach another node; then starts it again, waits until every speaker sees every other
 * alive, and counts whether the address stayed where it moved (a move back would cut the connections entering
 * there). Each round stops the node that announces then. Only the speaker stops, the node keeps serving: the
 * figure is when the client's traffic moves (the successor's gratuitous ARP), and no probe fails meanwhile.
 */
async function failovers(
  metal: MetalCluster,
  prober: TcpProber,
  times: number,
  moves: MoveLog,
  kind: string,
  stop: (node: MetalNode) => Promise<void>,
) {
  const away: number[] = [];
  let expected = 0;
  let stayed = 0;
  for (let i = 0; i < times; i++) {
    const current = await soleAnnouncer(metal);
    await waitFor(
      "the client to reach the announcing node",
      () => prober.lastAnswer(V4)?.answer === current.name,
    );
    const successor = metal.electedFor(
      V4,
      metal.nodes.filter((n) => n !== current),
    );
    const stopped = Date.now();
    const failover = await measureFailover(prober, V4, () => stop(current));
    away.push(failover.elapsedMs);
    if (failover.to === successor.name) expected++;
    await moves.endMove(`awayOn${kind}`, current.mac, metal.node(failover.to).mac, stopped);
    // Its last view would otherwise count as seeing everyone alive at once.
    current.live = [];
    current.startSpeaker(SPEAKER_ARGS);
    await allAlive(metal);
    // Time for the restarted speaker to decide and, were it to take the address back, for the client to see it.
    await sleep(RESTART_SETTLE_MS);
    if ((await soleAnnouncer(metal)).name === failover.to && prober.lastAnswer(V4)?.answer === failover.to)
      stayed++;
  }
  return {
    ...summary(away, 0),
    reachedElectedSuccessor: `${expected}/${times}`,
    stayedWithSuccessorAfterRestart: `${stayed}/${times}`,
    probeIntervalMs: PROBE_INTERVAL_MS,
  };
}

/** The node that alone announces V4 (waited for). */
async function soleAnnouncer(metal: MetalCluster): Promise<MetalNode> {
  const [node] = await waitFor("one node alone to announce", () => {
    const announcers = metal.announcersOf(V4);
    return announcers.length === 1 && announcers;
  });
  return node!;
}

/**
 * Every core kept busy by other processes for SATURATION_SECONDS: the addresses that moved and the speakers declared
 * dead meanwhile (none is right), read from the speakers' logs; then, still saturated, the announcing speaker is
 * SIGKILLed and must be failed over. It is started again, and every speaker sees every other alive, before the
 * benchmark goes on.
 */
async function saturated(metal: MetalCluster, recorder: ArpRecorder) {
  const figures = await measureSaturation(metal, {
    seconds: SATURATION_SECONDS,
    address: V4,
    kill: true,
    ...(SATURATION_HOGS ? { hogs: SATURATION_HOGS } : {}),
  });
  const failover = figures.failover!;
  const killed = metal.node(failover.killed);
  killed.live = [];
  killed.startSpeaker(SPEAKER_ARGS);
  await allAlive(metal);
  await soleAnnouncer(metal);
  const to = metal.node(failover.to);
  // What the client asking every 10 ms saw while saturated, until the kill.
  const asked = exchangeFigures(recorder.exchanges(figures.window.from, figures.window.to));
  return {
    seconds: figures.seconds,
    busyLoops: figures.hogs,
    machineBusy: figures.machineBusy,
    addressMoves: figures.moves.length,
    membersDeclaredDead: figures.declaredDead.length,
    refutations: figures.refuted.length,
    ...(figures.moves.length ? { movesSeen: figures.moves.slice(0, 12) } : {}),
    ...(figures.declaredDead.length ? { deathsSeen: figures.declaredDead.slice(0, 12) } : {}),
    arpAnsweredOfAsked: `${asked.answered}/${asked.asked} (${asked.late} late, ${asked.doubleAnswered} by two nodes)`,
    arpLongestSilenceMs: Math.round(asked.longestSilenceMs),
    lateRoundsNotJudged: figures.starvedRounds,
    silentSpeakersFoundRunning: figures.silentPeersFoundRunning,
    failoverAfterSigkillMs: failover.elapsedMs,
    failoverTo:
      failover.to === failover.expected
        ? "the elected successor"
        : `${failover.to}, not the elected successor ${failover.expected}`,
    arpAfterwards: failover.arpAnswers.every((mac) => mac === to.mac)
      ? `${failover.arpAnswers.length} answers, all from the successor`
      : `answered by ${failover.arpAnswers.join(" ") || "nobody"}`,
  };
}

async function allAlive(metal: MetalCluster): Promise<void> {
  const all = metal.nodes
    .map((n) => n.name)
    .sort()
    .join();
  await waitFor(
    "every speaker to see all speakers alive",
    () => metal.nodes.every((n) => n.started && [...n.live].sort().join() === all),
    { timeoutMs: 60_000 },
  );
}

if (import.meta.main) await report("speaker", benchSpeaker);
