// Clients and servers inside a test LAN (test/harness/netns.ts): arping and ndisc6 to see who answers for an
// address, a TCP responder standing in for kube-proxy and pods on a node, a TCP prober standing in for the
// clients, and the failover measurement built on them (reusable by benchmarks).
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import { IP, sh, type LanHost, type LanProcess, type TestLan } from "../../harness/netns.ts";

const run = promisify(execFile);

/** Like sh(), but a non-zero exit still returns what was printed (arping exits 1 when unanswered). */
async function output(command: string, args: string[], timeoutMs: number): Promise<string> {
  try {
    return (await run(command, args, { timeout: timeoutMs })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? "";
  }
}

export interface NeighbourAnswers {
  /** Requests sent. */
  readonly sent: number;
  /** The link-layer address of every answer, in arrival order (one per answer, duplicates included). */
  readonly macs: readonly string[];
  /** Round-trip time of each answer (arping only). */
  readonly rttMs: readonly number[];
}

/** `arping -c count` from `from`: every ARP reply for `address`, to see who answers and how often. */
export async function arping(from: LanHost, address: string, count = 3): Promise<NeighbourAnswers> {
  const text = await output(
    IP,
    [
      "netns",
      "exec",
      from.namespace,
      "arping",
      "-c",
      String(count),
      "-W",
      "0.2",
      "-w",
      "5",
      "-i",
      from.iface,
      address,
    ],
    15_000,
  );
  const replies = [...text.matchAll(/bytes from ([0-9a-f:]{17}) \(.*time=([\d.]+) (msec|usec)/g)];
  const macs = replies.map((m) => m[1]!);
  const rttMs = replies.map((m) => Number(m[2]) / (m[3] === "usec" ? 1000 : 1));
  const sent = Number(/(\d+) packets transmitted/.exec(text)?.[1] ?? count);
  return { sent, macs, rttMs };
}

/** `ndisc6 -m`: every Neighbor Advertisement answering one solicitation for `address`. */
export async function ndisc(from: LanHost, address: string): Promise<NeighbourAnswers> {
  const text = await output(
    IP,
    ["netns", "exec", from.namespace, "ndisc6", "-m", "-n", "-r", "1", "-w", "1000", address, from.iface],
    15_000,
  );
  const macs = [...text.matchAll(/Target link-layer address: ([0-9A-Fa-f:]{17})/g)].map((m) =>
    m[1]!.toLowerCase(),
  );
  return { sent: 1, macs, rttMs: [] };
}

/** The host's neighbour-table entry for `address`, as the kernel resolved it, or undefined. */
export async function neighbourMac(host: LanHost, address: string): Promise<string | undefined> {
  const entries = JSON.parse(await sh(IP, ["-j", "-n", host.namespace, "neigh", "show", "to", address])) as {
    lladdr?: string;
    state?: string[];
  }[];
  return entries.find((e) => e.lladdr && !e.state?.includes("FAILED"))?.lladdr;
}

/**
 * A stand-in for kube-proxy and a Service's pods on a node: each TCP connection to `port` on any local
 * address gets `text` and is closed. Resolves once it listens.
 */
export async function startResponder(
  lan: TestLan,
  host: LanHost,
  port: number,
  text: string,
): Promise<LanProcess> {
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = lan.start(
    host,
    `responder-${host.namespace}`,
    process.execPath,
    ["-e", RESPONDER, String(port), text],
    {
      onLine: (line) => line === "listening" && listening(),
    },
  );
  await Promise.race([
    ready,
    proc.exited.then((code) => Promise.reject(new Error(`responder exited (${code})`))),
  ]);
  return proc;
}

const RESPONDER = `
const [port, text] = process.argv.slice(1);
require("node:net").createServer((s) => { s.on("error", () => {}); s.end(text); })
  .listen({ port: Number(port), host: "::", ipv6Only: false }, () => console.log("listening"));`;

export interface ProbeResult {
  readonly target: string;
  /** When the connection attempt began and ended (ms since the epoch). */
  readonly start: number;
  readonly end: number;
  /** What the server said (its node name), or the error. */
  readonly answer?: string;
  readonly error?: string;
}

/**
 * A client that connects to each target every `intervalMs` (timeout 300 ms) and records who answered: the
 * kernel's own ARP/ND resolution and TCP, exactly as any client on the LAN would reach the address.
 */
export class TcpProber {
  readonly results: ProbeResult[] = [];
  readonly process: LanProcess;

  constructor(lan: TestLan, host: LanHost, targets: { address: string; port: number }[], intervalMs = 50) {
    const args = ["-e", PROBER, String(intervalMs), ...targets.map((t) => `${t.address},${t.port}`)];
    this.process = lan.start(host, `prober-${host.namespace}`, process.execPath, args, {
      onLine: (line) => {
        try {
          this.results.push(JSON.parse(line) as ProbeResult);
        } catch {
          // not a result line
        }
      },
    });
  }

  /** The most recent successful answer from `target` that began at or after `since`. */
  lastAnswer(target: string, since = 0): ProbeResult | undefined {
    return this.results.findLast((r) => r.target === target && r.answer !== undefined && r.start >= since);
  }

  stop(): Promise<void> {
    return this.process.kill();
  }
}

const PROBER = `
const net = require("node:net");
const [interval, ...targets] = process.argv.slice(1);
function probe(target) {
  const i = target.lastIndexOf(",");
  const start = Date.now();
  let data = "", done = false;
  const finish = (r) => { if (done) return; done = true; console.log(JSON.stringify({ target: target.slice(0, i), start, end: Date.now(), ...r })); };
  const s = net.connect({ host: target.slice(0, i), port: Number(target.slice(i + 1)), timeout: 300 });
  s.on("data", (d) => (data += d));
  s.on("end", () => finish({ answer: data }));
  s.on("timeout", () => { s.destroy(); finish({ error: "timeout" }); });
  s.on("error", (e) => finish({ error: e.code || e.message }));
}
setInterval(() => targets.forEach(probe), Number(interval));`;

export interface FailoverMeasurement {
  readonly target: string;
  readonly from: string;
  readonly to: string;
  /** From the start of `act` until the first answer from another node. */
  readonly elapsedMs: number;
  /** Probes that failed (timed out or were refused) meanwhile. */
  readonly failedProbes: number;
}

/**
 * Measures how long clients take to reach `target` through another node after `act` (e.g. killing the
 * announcing speaker): the time until the prober first gets an answer from a node other than the one
 * that answered before. Reusable by benchmarks; it asserts nothing about the duration.
 */
export async function measureFailover(
  prober: TcpProber,
  target: string,
  act: () => Promise<void>,
  timeoutMs = 30_000,
): Promise<FailoverMeasurement> {
  const before = prober.lastAnswer(target);
  if (!before?.answer) throw new Error(`no answer from ${target} before the failover`);
  const start = Date.now();
  await act();
  const deadline = start + timeoutMs;
  for (;;) {
    const after = prober.results.find(
      (r) => r.target === target && r.start >= start && r.answer !== undefined && r.answer !== before.answer,
    );
    if (after) {
      const failedProbes = prober.results.filter(
        (r) => r.target === target && r.start >= start && r.end <= after.end && r.error,
      ).length;
      return { target, from: before.answer, to: after.answer!, elapsedMs: after.end - start, failedProbes };
    }
    if (Date.now() > deadline) {
      throw new Error(
        `no node other than ${before.answer} answered ${target} within ${timeoutMs / 1000}s; last: ${JSON.stringify(prober.results.at(-1))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Sends raw Ethernet frames from `host` through the speaker's own packet-socket addon, `repeat` times over,
 * as fast as the kernel takes them: floods and hostile frames no ordinary tool would send. Resolves with
 * how many frames went out.
 */
export async function sendRawFrames(
  lan: TestLan,
  host: LanHost,
  addonPath: string,
  frames: Buffer[],
  repeat: number,
): Promise<number> {
  const file = `${lan.logDir}/frames-${Date.now()}.json`;
  await writeFile(file, JSON.stringify(frames.map((f) => f.toString("hex"))));
  let sent = -1;
  const proc = lan.start(
    host,
    `flood-${host.namespace}`,
    process.execPath,
    ["-e", FLOODER, addonPath, host.iface, file, String(repeat)],
    {
      onLine: (line) => (sent = Number(line)),
    },
  );
  await proc.exited;
  if (sent < 0) throw new Error(`flooding from ${host.namespace} failed: ${proc.tail()}`);
  return sent;
}

const FLOODER = `
const [addonPath, iface, file, repeat] = process.argv.slice(1);
const addon = require(addonPath);
const frames = JSON.parse(require("node:fs").readFileSync(file, "utf8")).map((h) => Buffer.from(h, "hex"));
const handle = addon.open(iface, () => {});
let sent = 0, round = 0, i = 0;
function burst() {
  for (let n = 0; n < 256 && round < Number(repeat); n++) {
    if (addon.send(handle, frames[i]) !== 0) break;
    sent++;
    if (++i === frames.length) { i = 0; round++; }
  }
  if (round < Number(repeat)) setImmediate(burst);
  else { console.log(sent); addon.close(handle); }
}
burst();`;

/** The speaker's Prometheus metrics, fetched inside its namespace (it listens on that namespace's loopback). */
export async function speakerMetrics(host: LanHost, port = 7472): Promise<Map<string, number>> {
  const script = `fetch("http://127.0.0.1:${port}/metrics").then((r) => r.text()).then((t) => process.stdout.write(t))`;
  const text = await sh(IP, ["netns", "exec", host.namespace, process.execPath, "-e", script]);
  const metrics = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
    if (match) metrics.set(match[1]!, Number(match[2]));
  }
  return metrics;
}

/** Sum of a metric over all label sets matching `labels` (e.g. `protocol="arp"`). */
export function metricSum(metrics: Map<string, number>, name: string, ...labels: string[]): number {
  let sum = 0;
  for (const [key, value] of metrics) {
    if (key === name || (key.startsWith(`${name}{`) && labels.every((l) => key.includes(l)))) sum += value;
  }
  return sum;
}
