// Speakers under a saturated CPU, for the test and the benchmark: every core kept busy by other processes
// (cpuHogs.ts) for a while, then what the speakers did meanwhile, read from their own logs (each line is
// timestamped by the speaker that wrote it, so nothing is missed while this process is starved too): addresses
// that moved, members declared dead, refutations. Then, still saturated, the announcing speaker is SIGKILLed:
// a dead one must still be failed over, or telling slow from dead would only be never declaring anyone dead.
import { readFile } from "node:fs/promises";
import { cpus } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { waitFor } from "../../harness/wait.ts";
import { arping, metricSum, speakerMetrics } from "./clients.ts";
import { startCpuHogs } from "./cpuHogs.ts";
import type { MetalCluster, MetalNode } from "./speakers.ts";

/** What the speakers did in a stretch of time, from their logs. */
export interface SpeakerEvents {
  /** Each address that a speaker gained or lost, e.g. "node1 lost 192.0.2.130 at +12.3 s". */
  readonly moves: string[];
  /** Each member a speaker declared dead, e.g. "node0 declared node2 dead at +12.1 s". */
  readonly declaredDead: string[];
  /** Speakers that heard of their own death and refuted it. */
  readonly refuted: string[];
}

export interface SaturationFigures extends SpeakerEvents {
  readonly seconds: number;
  /** When the saturation began, and when it ended or the kill came (ms since the epoch). */
  readonly window: { readonly from: number; readonly to: number };
  readonly hogs: number;
  /** Share of the machine's CPU time that was busy during the saturation, e.g. "99% of 2 cores". */
  readonly machineBusy: string;
  /** Probe rounds the speakers skipped judging because they came late (their own process was starved). */
  readonly starvedRounds: number;
  /** Probes that found a silent peer's process running (its node's kernel took the connection): not judged dead. */
  readonly silentPeersFoundRunning: number;
  /** Then, still saturated: the announcing speaker SIGKILLed. */
  readonly failover?: FailoverUnderLoad;
}

export interface FailoverUnderLoad {
  readonly killed: string;
  readonly to: string;
  readonly expected: string;
  /** From the kill to the new announcer's "announced addresses changed" line (its own clock). */
  readonly elapsedMs: number;
  /** The client's ARP answers afterwards (MACs), which must be the new announcer's. */
  readonly arpAnswers: readonly string[];
}

interface LogEntry {
  readonly time: string;
  readonly msg?: string;
  readonly gained?: string[];
  readonly lost?: string[];
  readonly member?: string;
}

/**
 * Saturates the CPUs for `seconds` with the speakers of `metal` running and `address` announced, reports what
 * the speakers did meanwhile, and with `kill` SIGKILLs the address's announcer before the CPUs are freed.
 */
export async function measureSaturation(
  metal: MetalCluster,
  options: { seconds: number; address: string; kill: boolean; hogs?: number },
): Promise<SaturationFigures> {
  const running = metal.nodes.filter((n) => n.process?.running);
  const countedBefore = await membershipEvents(running);
  const machineBefore = await machineCpu();
  const hogs = startCpuHogs(options.hogs);
  const start = Date.now();
  try {
    await sleep(options.seconds * 1000);
    const end = Date.now();
    const machineAfter = await machineCpu();
    const events = await speakerEvents(running, start, end);
    const busy = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
    const counted = await membershipEvents(running);
    const figures = {
      seconds: options.seconds,
      window: { from: start, to: end },
      hogs: hogs.count,
      machineBusy: `${Math.round(100 * busy)}% of ${cpus().length} cores`,
      ...events,
      starvedRounds: counted.starved - countedBefore.starved,
      silentPeersFoundRunning: counted.stalled - countedBefore.stalled,
    };
    if (!options.kill) return figures;
    return { ...figures, failover: await killAnnouncer(metal, options.address) };
  } finally {
    await hogs.stop();
  }
}

/** SIGKILLs the speaker announcing `address` and waits for the one the election picks among the others. */
async function killAnnouncer(metal: MetalCluster, address: string): Promise<FailoverUnderLoad> {
  const [victim, ...more] = metal.announcersOf(address);
  if (!victim || more.length) throw new Error(`${address} has no single announcer to kill`);
  const expected = metal.electedFor(
    address,
    metal.nodes.filter((n) => n !== victim && n.process?.running),
  );
  const killedAt = Date.now();
  await victim.kill();
  // Generous: the machine is saturated, and a failover that takes long is a figure, not a hang.
  const to = await waitFor(
    `another speaker to announce ${address} after ${victim.name} was killed`,
    () => metal.announcersOf(address)[0],
    { timeoutMs: 60_000, intervalMs: 50 },
  );
  const gained = (await logEntries([to], killedAt, Infinity))
    .get(to)!
    .find((e) => e.msg === "announced addresses changed" && e.gained?.includes(address));
  // The node's own log line may still be on its way through the pipe; the wait's end bounds it then.
  const elapsedMs = (gained ? Date.parse(gained.time) : Date.now()) - killedAt;
  const answers = await arping(metal.lan.client, address, 3);
  return { killed: victim.name, to: to.name, expected: expected.name, elapsedMs, arpAnswers: answers.macs };
}

/** What the speakers of `nodes` logged doing between `from` and `to` (ms since the epoch). */
export async function speakerEvents(nodes: MetalNode[], from: number, to: number): Promise<SpeakerEvents> {
  const at = (e: LogEntry) => `at +${((Date.parse(e.time) - from) / 1000).toFixed(1)} s`;
  const events = { moves: [] as string[], declaredDead: [] as string[], refuted: [] as string[] };
  for (const [node, log] of await logEntries(nodes, from, to)) {
    for (const e of log) {
      if (e.msg === "announced addresses changed") {
        for (const a of e.lost ?? []) events.moves.push(`${node.name} lost ${a} ${at(e)}`);
        for (const a of e.gained ?? []) events.moves.push(`${node.name} gained ${a} ${at(e)}`);
      }
      if (e.msg === "speaker declared dead")
        events.declaredDead.push(`${node.name} declared ${e.member} dead ${at(e)}`);
      if (e.msg === "refuted own death") events.refuted.push(`${node.name} ${at(e)}`);
    }
  }
  return events;
}

/** Each speaker's log lines written between `from` and `to` (ms since the epoch), parsed. */
async function logEntries(nodes: MetalNode[], from: number, to: number): Promise<Map<MetalNode, LogEntry[]>> {
  // The lines reach the log file through this process's pipe; give them a moment to be written.
  await sleep(500);
  const out = new Map<MetalNode, LogEntry[]>();
  for (const node of nodes) {
    const text = await readFile(node.process!.logFile, "utf8");
    const entries: LogEntry[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      let entry: LogEntry;
      try {
        entry = JSON.parse(line) as LogEntry;
      } catch {
        continue;
      }
      const time = Date.parse(entry.time);
      if (time >= from && time <= to) entries.push(entry);
    }
    out.set(node, entries);
  }
  return out;
}

/**
 * Rounds the speakers judged nobody because they came late, and silent peers found to be starved rather than
 * dead (their process took a connection), summed over `nodes`.
 */
async function membershipEvents(nodes: MetalNode[]): Promise<{ starved: number; stalled: number }> {
  const counts = { starved: 0, stalled: 0 };
  for (const node of nodes) {
    const metrics = await speakerMetrics(node.host);
    for (const event of ["starved", "stalled"] as const)
      counts[event] += metricSum(metrics, "portico_speaker_membership_events_total", `event="${event}"`);
  }
  return counts;
}

/** Jiffies of the whole machine from /proc/stat: all, and all but idle and iowait. */
async function machineCpu(): Promise<{ total: number; busy: number }> {
  const fields = (await readFile("/proc/stat", "utf8")).split("\n")[0]!.split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { total, busy: total - fields[3]! - fields[4]! };
}
