// A client that asks for an address over ARP at a steady rate (a broadcast request every `intervalMs`, sent
// through the speaker's packet-socket addon, so nothing on the client caches or unicasts) and records who
// answered each request. The asking process sees its own requests and the replies in order, with its own
// clock; with `kernelTimestamps` tcpdump also captures the client's interface and its kernel timestamps are
// used instead, so latencies are the LAN's rather than a process's (the benchmark; tcpdump is needed then).
import { addonPath } from "../../../speaker/io/addon.ts";
import { arpRequestFrame } from "../../../speaker/packets/arp.ts";
import type { LanHost, LanProcess, TestLan } from "../../harness/netns.ts";
import { waitFor } from "../../harness/wait.ts";
import { pairExchanges, TcpdumpHexReader, type ArpFrame, type Exchange } from "./exchanges.ts";

/**
 * Each request's sender IP, in turn: a reply goes to it, so even a reply that comes after later requests is
 * paired with its own (up to this many requests late). Only the client's link-layer address is real.
 */
const SENDERS = Array.from({ length: 64 }, (_, i) => `198.51.100.${i + 1}`);

export class ArpRecorder {
  /** As the asking process saw them. */
  readonly asked: ArpFrame[] = [];
  /** As tcpdump captured them (kernel timestamps), with `kernelTimestamps` only. */
  readonly captured: ArpFrame[] = [];
  private readonly lan: TestLan;
  private readonly host: LanHost;
  private readonly address: string;
  private readonly intervalMs: number;
  private readonly kernelTimestamps: boolean;
  private capture: LanProcess | undefined;
  private reader: TcpdumpHexReader | undefined;
  private asker: LanProcess | undefined;

  constructor(
    lan: TestLan,
    host: LanHost,
    address: string,
    options: { intervalMs?: number; kernelTimestamps?: boolean } = {},
  ) {
    this.lan = lan;
    this.host = host;
    this.address = address;
    this.intervalMs = options.intervalMs ?? 10;
    this.kernelTimestamps = options.kernelTimestamps ?? false;
  }

  /** Starts asking (and capturing); resolves once requests are seen going out. */
  async start(): Promise<void> {
    const { lan, host } = this;
    if (this.kernelTimestamps) {
      const reader = new TcpdumpHexReader((frame) => this.captured.push(frame));
      this.reader = reader;
      this.capture = lan.start(
        host,
        `arp-capture-${host.namespace}`,
        "tcpdump",
        ["-i", host.iface, "-n", "-tt", "-xx", "-l", "--immediate-mode", "-B", "8192", "arp"],
        { onLine: (line) => reader.line(line) },
      );
    }
    const frames = SENDERS.map((senderIp) =>
      arpRequestFrame({ senderMac: host.mac, senderIp, targetIp: this.address }).toString("hex"),
    );
    this.asker = lan.start(
      host,
      `arp-asker-${host.namespace}`,
      process.execPath,
      ["-e", ASKER, addonPath(), host.iface, frames.join(","), String(this.intervalMs)],
      {
        onLine: (line) => {
          const [kind, at, a, b] = line.split(" ");
          if (kind === "request")
            this.asked.push({
              at: Number(at),
              kind,
              src: host.mac,
              dst: "ff:ff:ff:ff:ff:ff",
              address: this.address,
              peer: a!,
            });
          if (kind === "reply")
            this.asked.push({
              at: Number(at),
              kind,
              src: a!,
              dst: host.mac,
              address: this.address,
              peer: b!,
            });
        },
      },
    );
    // tcpdump says that it listens on standard error only: wait until it has seen a request go out.
    await waitFor("the client's ARP requests to be recorded", () =>
      (this.kernelTimestamps ? this.captured : this.asked).some((f) => f.kind === "request"),
    );
  }

  /** Every request sent in [since, until] (ms since the epoch) with its answers. */
  exchanges(since = 0, until = Infinity): Exchange[] {
    const frames = this.kernelTimestamps ? this.captured : this.asked;
    return pairExchanges(frames, this.host.mac, this.address).filter(
      (e) => e.sentAt >= since && e.sentAt <= until,
    );
  }

  async stop(): Promise<void> {
    await this.asker?.kill();
    // Replies to the last requests are still on their way.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await this.capture?.signal("SIGTERM");
    this.reader?.flush();
  }
}

// One request per tick, each from the next sender IP, never a catch-up burst. Its socket receives every ARP
// frame but its own (outgoing ones are ignored); it prints the replies for the address sent to this client,
// with the sender IP they answer. Times are ms since the epoch at sub-millisecond resolution.
const ASKER = `
const [addonPath, iface, hexes, interval] = process.argv.slice(1);
const addon = require(addonPath);
const requests = hexes.split(",").map((h) => Buffer.from(h, "hex"));
const own = requests[0].subarray(6, 12), asked = requests[0].subarray(38, 42);
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
const mac = (b) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(":");
const ip = (b) => [...b].join(".");
const handle = addon.open(iface, (frames) => {
  const at = now();
  for (const f of frames ?? []) {
    if (f.length < 42 || f.readUInt16BE(12) !== 0x0806 || f.readUInt16BE(20) !== 2) continue;
    if (!f.subarray(0, 6).equals(own) || !f.subarray(28, 32).equals(asked)) continue;
    console.log("reply " + at + " " + mac(f.subarray(6, 12)) + " " + ip(f.subarray(38, 42)));
  }
});
let n = 0;
setInterval(() => {
  const request = requests[n++ % requests.length];
  const at = now();
  if (addon.send(handle, request) === 0) console.log("request " + at + " " + ip(request.subarray(28, 32)));
}, Number(interval));`;
