// `make bench-speaker`, the bare-metal speaker. A LAN of network namespaces (test/integration/metal): node
// namespaces each running the real speaker against the real apiserver, and a client namespace that measures
// the speaker's ARP and NDP reply latency next to the kernel's own, the failover time after a SIGKILL and the
// hand-over time after a SIGTERM, and what an ARP flood costs the announcing speaker. Needs root. Meanwhile a
// client asks for the address over ARP every 10 ms and tcpdump timestamps every request and reply in the
// kernel: answered/asked and reply latency in a quiet stretch, and per address move (SIGKILL, restart,
// SIGTERM, relabel) the longest time with no answer and the requests answered by two nodes. Then every core is
// saturated by other processes for ten minutes: no address may move and no speaker be declared dead meanwhile,
// and a speaker SIGKILLed while the machine is still saturated must be failed over.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { promisify } from "node:util";
import { addonPath } from "../speaker/io/addon.ts";
import { arpRequestFrame } from "../speaker/packets/arp.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { IP, requireLanTools, type LanHost, type TestLan } from "../test/harness/netns.ts";
import { installPoolCrd } from "../test/harness/pools.ts";
import { waitFor } from "../test/harness/wait.ts";
import {
  arping,
  measureFailover,
  metricSum,
  sendRawFrames,
  speakerMetrics,
  TcpProber,
} from "../test/integration/metal/clients.ts";
import { ArpRecorder } from "../test/integration/metal/arpRecorder.ts";
import { exchangeFigures } from "../test/integration/metal/exchanges.ts";
import { measureAtSize } from "../test/integration/metal/atSize.ts";
import { MoveLog, poolEditMoves, relabelMoves } from "../test/integration/metal/moves.ts";
import { moduleFootprint } from "../test/integration/metal/footprint.ts";
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
import { percentile, report, sleep } from "./report.ts";
import { processUsage } from "./usage.ts";

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
/** As deployed: the tests log at debug, which would log every answer and inflate latency and CPU. */
const SPEAKER_ARGS = ["--log-level=info"];

const V4 = "192.0.2.200";
const V6 = "2001:db8::200";

const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
const ms = (value: number) => +value.toFixed(3);

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
    const arp = await arpLatency(metal, elected);
    progress(`NDP: ${SOLICITATIONS} solicitations each to the speaker and to the kernel`);
    const ndp = await ndpLatency(metal, elected6);

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
    const failover = await failovers(metal, elected, prober, FAILOVERS, moves, "Sigkill", (n) => n.kill());
    progress(`${HANDOVERS} SIGTERMs of the announcing speaker`);
    const handover = await failovers(metal, elected, prober, HANDOVERS, moves, "Sigterm", (n) =>
      n.terminate(),
    );
    await prober.stop();
    // Before the relabels and pool edits, which leave the address in a pool only its elected node may announce.
    progress(`every core saturated by other processes for ${SATURATION_SECONDS} s, then a SIGKILL`);
    const saturation = await saturated(metal, recorder);
    progress(`${RELABELS} relabels of the announcing node, away and back`);
    await relabelMoves(metal, elected, V4, RELABELS, moves);
    progress(`${RELABELS} edits of the address's pool, away and back`);
    await poolEditMoves(metal, elected, V4, RELABELS, moves);
    await recorder.stop();

    progress("the announcing speaker idle");
    const idle = await idleCpu(elected);
    progress(`ARP flood at ${FLOOD_RATE}/s for ${FLOOD_SECONDS} s`);
    const client = metal.lan.client;
    const paced = await arpFlood(metal, elected, (frame) =>
      sendPaced(metal.lan, client, frame, FLOOD_RATE, FLOOD_SECONDS),
    );
    progress(`ARP flood of ${FLOOD_FRAMES} requests as fast as they go out`);
    const saturating = await arpFlood(metal, elected, (frame) =>
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
 * Round trips as arping sees them (request sent to reply captured), for the Service address (the speaker
 * answers) and for the same node's own LAN address (its kernel answers), in alternating rounds so that both
 * see the same machine.
 */
async function arpLatency(metal: MetalCluster, node: MetalNode) {
  const speaker: number[] = [];
  const kernel: number[] = [];
  const round = 50;
  for (let done = 0; done < REQUESTS; done += round) {
    const count = Math.min(round, REQUESTS - done);
    speaker.push(...(await arpRtts(metal.lan.client, V4, count, node.mac)));
    kernel.push(...(await arpRtts(metal.lan.client, node.host.ipv4, count, node.mac)));
  }
  return { requests: REQUESTS, speaker: summary(speaker), kernel: summary(kernel) };
}

/** `arping -c count` 10 ms apart; arping() in clients.ts waits 200 ms between requests and stops after 5 s. */
async function arpRtts(from: LanHost, address: string, count: number, mac: string) {
  const args = ["-c", String(count), "-W", "0.01", "-w", String(5 + count), "-i", from.iface, address];
  const text = await output(IP, ["netns", "exec", from.namespace, "arping", ...args]);
  const replies = [...text.matchAll(/bytes from ([0-9a-f:]{17}) \(.*time=([\d.]+) (msec|usec)/g)];
  const wrong = replies.filter((m) => m[1] !== mac);
  if (!replies.length || wrong.length)
    throw new Error(
      `ARP for ${address}: expected replies from ${mac} alone, arping said: ${text.slice(-500)}`,
    );
  return replies.map((m) => Number(m[2]) / (m[3] === "usec" ? 1000 : 1));
}

/**
 * ndisc6 prints no timings, so the client's interface is captured with tcpdump and each solicitation paired
 * with the advertisement answering it: the time between the two on the client's wire.
 */
async function ndpLatency(metal: MetalCluster, node: MetalNode) {
  const { lan } = metal;
  const client = lan.client;
  const seen: { time: number; kind: "solicitation" | "advertisement"; from: string; target: string }[] = [];
  const capture = lan.start(
    client,
    "tcpdump-ndp",
    "tcpdump",
    ["-i", client.iface, "-n", "-tt", "-l", "icmp6 and (ip6[40] == 135 or ip6[40] == 136)"],
    {
      onLine: (line) => {
        const m =
          /^(\d+\.\d+) IP6 (\S+) > \S+: ICMP6, neighbor (solicitation|advertisement), (?:who has|tgt is) ([0-9a-f:]+)/.exec(
            line,
          );
        if (m)
          seen.push({
            time: Number(m[1]) * 1000,
            from: m[2]!,
            kind: m[3] as "solicitation" | "advertisement",
            target: m[4]!,
          });
      },
    },
  );
  const solicit = (target: string) =>
    output(IP, [
      "netns",
      "exec",
      client.namespace,
      "ndisc6",
      "-1",
      "-n",
      "-r",
      "1",
      "-w",
      "1000",
      target,
      client.iface,
    ]);
  // tcpdump says it listens on standard error only; a captured exchange says the same.
  await waitFor("tcpdump to capture a neighbour solicitation", async () => {
    await solicit(node.host.ipv6);
    return seen.some((s) => s.kind === "advertisement");
  });
  // Late lines of the warm-up are not counted.
  await sleep(300);
  const start = seen.length;
  for (let i = 0; i < SOLICITATIONS; i++) {
    await solicit(V6);
    await solicit(node.host.ipv6);
  }
  await sleep(300);
  await capture.kill();
  const rtts = (target: string) => {
    const out: number[] = [];
    const events = seen.slice(start).filter((e) => e.target === target);
    for (const [i, e] of events.entries()) {
      // Only the client solicits these targets (from its link-local or global address).
      if (e.kind !== "solicitation") continue;
      const answer = events.slice(i + 1).find((a) => a.kind === "advertisement");
      if (answer) out.push(answer.time - e.time);
    }
    if (!out.length)
      throw new Error(
        `no neighbour advertisement for ${target} was captured; tcpdump saw: ${JSON.stringify(seen.slice(-6))}`,
      );
    return out;
  };
  return {
    solicitations: SOLICITATIONS,
    speaker: summary(rtts(V6)),
    kernel: summary(rtts(node.host.ipv6)),
  };
}

/**
 * Stops the announcing speaker `times` over (`stop`: SIGKILL or SIGTERM) and measures how long the client's
 * connections take to reach another node; then restarts it, measures how long the address takes to come back
 * (the restarted speaker is elected again; its start-up included), and waits until every speaker sees every
 * other alive before the next round. Only the speaker stops, the node keeps serving: the figure is when the
 * client's traffic moves (the successor's gratuitous ARP), and no probe fails meanwhile.
 */
async function failovers(
  metal: MetalCluster,
  elected: MetalNode,
  prober: TcpProber,
  times: number,
  moves: MoveLog,
  kind: string,
  stop: (node: MetalNode) => Promise<void>,
) {
  const away: number[] = [];
  const back: number[] = [];
  let expected = 0;
  const successor = metal.electedFor(
    V4,
    metal.nodes.filter((n) => n !== elected),
  );
  for (let i = 0; i < times; i++) {
    await waitFor(
      "the client to reach the elected node",
      () => prober.lastAnswer(V4)?.answer === elected.name,
    );
    const stopped = Date.now();
    const failover = await measureFailover(prober, V4, () => stop(elected));
    away.push(failover.elapsedMs);
    if (failover.to === successor.name) expected++;
    await moves.endMove(`awayOn${kind}`, elected.mac, metal.node(failover.to).mac, stopped);
    // Its last view would otherwise count as seeing everyone alive at once.
    elected.live = [];
    const restarted = Date.now();
    const failback = await measureFailover(prober, V4, () =>
      Promise.resolve(elected.startSpeaker(SPEAKER_ARGS)),
    );
    back.push(failback.elapsedMs);
    await moves.endMove(`backAfter${kind}Restart`, metal.node(failover.to).mac, elected.mac, restarted);
    await allAlive(metal);
    await waitFor("the restarted node alone to announce", () => {
      const announcers = metal.announcersOf(V4);
      return announcers.length === 1 && announcers[0] === elected;
    });
  }
  return {
    ...summary(away, 0),
    reachedElectedSuccessor: `${expected}/${times}`,
    backAfterRestart: summary(back, 0),
    probeIntervalMs: PROBE_INTERVAL_MS,
  };
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
  const elected = metal.electedFor(V4);
  await waitFor("the elected node alone to announce again", () => {
    const announcers = metal.announcersOf(V4);
    return announcers.length === 1 && announcers[0] === elected;
  });
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

/** The idle cost of the announcing speaker (the membership protocol's 60 datagrams a second), as a share of a core. */
async function idleCpu(elected: MetalNode) {
  const pid = speakerPid(elected);
  const start = performance.now();
  const before = await cpuSeconds(pid);
  await sleep(5_000);
  const share = ((await cpuSeconds(pid)) - before) / ((performance.now() - start) / 1000);
  const metrics = await speakerMetrics(elected.host);
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    cpuShare: `${(100 * share).toFixed(1)}% of a core`,
    rssMiB: mib((await processUsage(pid)).rssBytes),
    // Where the RSS goes: the JavaScript heap in use, and what loading the speaker's modules costs alone.
    heapUsedMiB: mib(metricSum(metrics, "nodejs_heap_size_used_bytes")),
    rssOfModulesAloneMiB: await moduleFootprint(),
  };
}

/**
 * Broadcasts ARP requests for the Service address from the client (`send` says how many went out) and
 * measures the announcing speaker's CPU over the flood (and, for comparison, the other speakers', which
 * receive the same broadcasts and answer none), what its metrics counted, and whether the address stayed.
 */
async function arpFlood(metal: MetalCluster, elected: MetalNode, send: (frame: Buffer) => Promise<number>) {
  const client = metal.lan.client;
  const pids = new Map(metal.nodes.map((n) => [n, speakerPid(n)]));
  const cpuAll = async () =>
    new Map(await Promise.all([...pids].map(async ([n, pid]) => [n, await cpuSeconds(pid)] as const)));
  const frame = arpRequestFrame({ senderMac: client.mac, senderIp: client.ipv4, targetIp: V4 });
  const before = await speakerMetrics(elected.host);
  const deadBefore = metal.nodes.map((n) => n.declaredDead.length);
  const cpuBefore = await cpuAll();
  const machineBefore = await machineCpu();
  // Whether any other node announced the address at any moment of the flood.
  const movedTo = new Set<string>();
  const watch = setInterval(() => {
    for (const n of metal.announcersOf(V4)) if (n !== elected) movedTo.add(n.name);
    if (!metal.announcersOf(V4).includes(elected)) movedTo.add("nobody");
  }, 20).unref();
  const start = performance.now();
  const sent = await send(frame);
  const sendSeconds = (performance.now() - start) / 1000;
  // The window ends when the speaker has read every frame the kernel queued for it.
  let last = -1;
  await waitFor(
    "the speaker to stop receiving flood frames",
    async () => {
      const received = metricSum(await speakerMetrics(elected.host), "portico_speaker_frames_received_total");
      const settled = received === last;
      last = received;
      return settled;
    },
    { intervalMs: 250, timeoutMs: 60_000 },
  );
  const seconds = (performance.now() - start) / 1000;
  const cpuAfter = await cpuAll();
  const machineAfter = await machineCpu();
  // The speaker reads the kernel's drop count every 5 s (speaker.ts): wait for the flood's last ones.
  await sleep(5_500);
  clearInterval(watch);
  const after = await speakerMetrics(elected.host);
  const delta = (name: string, ...labels: string[]) =>
    metricSum(after, name, ...labels) - metricSum(before, name, ...labels);
  const cpu = (n: MetalNode) => cpuAfter.get(n)! - cpuBefore.get(n)!;
  const others = metal.nodes.filter((n) => n !== elected).map(cpu);
  const received = delta("portico_speaker_frames_received_total");

  // Did the address stay? Nobody declared a speaker dead, no other node announced, and ARP still says so.
  const answers = await arping(client, V4, 3);
  const declared = metal.nodes.flatMap((n, i) =>
    n.declaredDead.slice(deadBefore[i]).map((d) => `${n.name}: ${d}`),
  );
  const problems = [
    ...(declared.length ? [`declared dead ${declared.join(", ")}`] : []),
    ...(movedTo.size ? [`announced meanwhile by ${[...movedTo].join(", ")}`] : []),
    ...(answers.macs.length && answers.macs.every((m) => m === elected.mac)
      ? []
      : [`ARP afterwards answered by ${answers.macs.join(" ") || "nobody"}`]),
  ];
  return {
    framesSent: sent,
    framesPerSecond: Math.round(sent / sendSeconds),
    received,
    answered: delta("portico_speaker_requests_answered_total"),
    rateLimited: delta("portico_speaker_frames_dropped_total", 'reason="RateLimited"'),
    kernelQueueFull: delta("portico_speaker_frames_dropped_total", 'reason="KernelQueueFull"'),
    windowSeconds: +seconds.toFixed(1),
    announcerCpuSeconds: +cpu(elected).toFixed(2),
    announcerCpuShare: `${Math.round((100 * cpu(elected)) / seconds)}% of a core`,
    announcerCpuPerFrameUs: received ? Math.round((1e6 * cpu(elected)) / received) : "none received",
    othersCpuShare: `${Math.round((100 * Math.max(...others)) / seconds)}% of a core (the busier)`,
    machineBusy: `${Math.round((100 * (machineAfter.busy - machineBefore.busy)) / (machineAfter.total - machineBefore.total))}% of ${cpus().length} cores`,
    addressStayed: problems.length ? `no: ${problems.join("; ")}` : "yes",
  };
}

/**
 * Sends `frame` from `host` at `rate` frames a second for `seconds`, through the speaker's packet-socket
 * addon (sendRawFrames sends as fast as it can, which saturates a small machine). Resolves with the count sent.
 */
async function sendPaced(lan: TestLan, host: LanHost, frame: Buffer, rate: number, seconds: number) {
  let sent = -1;
  const proc = lan.start(
    host,
    `paced-flood-${host.namespace}`,
    process.execPath,
    ["-e", PACED, addonPath(), host.iface, frame.toString("hex"), String(rate), String(seconds)],
    { onLine: (line) => (sent = Number(line)) },
  );
  await proc.exited;
  if (!(sent >= 0)) throw new Error(`the paced flood from ${host.namespace} failed: ${proc.tail()}`);
  return sent;
}

// Every 5 ms it sends what is due by then; a refused send counts as due too, so a full queue cannot spin it.
const PACED = `
const [addonPath, iface, hex, rate, seconds] = process.argv.slice(1);
const addon = require(addonPath);
const frame = Buffer.from(hex, "hex");
const handle = addon.open(iface, () => {});
const start = performance.now();
let sent = 0, attempts = 0;
const timer = setInterval(() => {
  const elapsed = Math.min((performance.now() - start) / 1000, Number(seconds));
  for (; attempts < elapsed * Number(rate); attempts++) if (addon.send(handle, frame) === 0) sent++;
  if (elapsed >= Number(seconds)) { clearInterval(timer); addon.close(handle); console.log(sent); }
}, 5);`;

/** The speaker's own process: `ip netns exec` and setpriv exec it, so the spawned pid is node itself. */
function speakerPid(node: MetalNode): number {
  const pid = node.process?.running ? node.process.pid : undefined;
  if (!pid) throw new Error(`the speaker on ${node.name} is not running`);
  return pid;
}

async function cpuSeconds(pid: number): Promise<number> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8");
  if (!/speaker\/main\.[jt]s/.test(cmdline)) throw new Error(`process ${pid} is not a speaker: ${cmdline}`);
  return (await processUsage(pid)).cpuSeconds;
}

/** Jiffies of the whole machine from /proc/stat: all, and all but idle and iowait. */
async function machineCpu(): Promise<{ total: number; busy: number }> {
  const fields = (await readFile("/proc/stat", "utf8")).split("\n")[0]!.split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { total, busy: total - fields[3]! - fields[4]! };
}

function summary(values: number[], digits = 3) {
  const round = digits ? ms : Math.round;
  return {
    p50Ms: round(percentile(values, 50)),
    p99Ms: round(percentile(values, 99)),
    maxMs: round(Math.max(...values)),
    samples: values.length,
  };
}

/** stdout even when the command exits non-zero (arping does when a request goes unanswered). */
async function output(command: string, args: string[]): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { timeout: 120_000 })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? "";
  }
}

if (import.meta.main) await report("speaker", benchSpeaker);
