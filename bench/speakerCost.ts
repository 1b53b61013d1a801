// `make bench-speaker`: what the announcing speaker costs — idle (the membership protocol's datagrams) and under a
// flood of ARP requests for its address, paced or as fast as the client can send — and whether the address
// stays put meanwhile.
import { readFile } from "node:fs/promises";
import { cpus } from "node:os";
import { addonPath } from "../speaker/io/addon.ts";
import { arpRequestFrame } from "../speaker/packets/arp.ts";
import type { LanHost, TestLan } from "../test/harness/netns.ts";
import { waitFor } from "../test/harness/wait.ts";
import { arping, metricSum, speakerMetrics } from "../test/integration/metal/clients.ts";
import { moduleFootprint } from "../test/integration/metal/footprint.ts";
import type { MetalCluster, MetalNode } from "../test/integration/metal/speakers.ts";
import { sleep } from "./report.ts";
import { processUsage } from "./usage.ts";

/** The idle cost of the announcing speaker (the membership protocol's 60 datagrams a second), as a share of a core. */
export async function idleCpu(elected: MetalNode) {
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
export async function arpFlood(
  metal: MetalCluster,
  elected: MetalNode,
  address: string,
  send: (frame: Buffer) => Promise<number>,
) {
  const client = metal.lan.client;
  const pids = new Map(metal.nodes.map((n) => [n, speakerPid(n)]));
  const cpuAll = async () =>
    new Map(await Promise.all([...pids].map(async ([n, pid]) => [n, await cpuSeconds(pid)] as const)));
  const frame = arpRequestFrame({ senderMac: client.mac, senderIp: client.ipv4, targetIp: address });
  const before = await speakerMetrics(elected.host);
  const deadBefore = metal.nodes.map((n) => n.declaredDead.length);
  const cpuBefore = await cpuAll();
  const machineBefore = await machineCpu();
  // Whether any other node announced the address at any moment of the flood.
  const movedTo = new Set<string>();
  const watch = setInterval(() => {
    for (const n of metal.announcersOf(address)) if (n !== elected) movedTo.add(n.name);
    if (!metal.announcersOf(address).includes(elected)) movedTo.add("nobody");
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
  const answers = await arping(client, address, 3);
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
export async function sendPaced(lan: TestLan, host: LanHost, frame: Buffer, rate: number, seconds: number) {
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
export function speakerPid(node: MetalNode): number {
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
