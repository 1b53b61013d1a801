// A client that asks for an address over ARP at a steady rate (a broadcast request every `intervalMs`, sent
// through the speaker's packet-socket addon, so nothing on the client caches or unicasts) and records who
// answered each request. The asking process sees its own requests and the replies in order, with its own
// clock; with `kernelTimestamps` tcpdump also captures the client's interface and its kernel timestamps are
// used instead, so latencies are the LAN's rather than a process's (the benchmark; tcpdump is needed then).
import { addonPath } from "../../../speaker/io/addon.ts";
import { arpRequestFrame } from "../../../speaker/packets/arp.ts";
import type { LanHost, LanProcess, TestLan } from "../../harness/netns.ts";
import { waitFor } from "../../harness/wait.ts";
import { pairExchanges, parseTcpdumpArp, type ArpFrame, type Exchange } from "./exchanges.ts";

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
      this.capture = lan.start(
        host,
        `arp-capture-${host.namespace}`,
        "tcpdump",
        ["-i", host.iface, "-n", "-e", "-tt", "-l", "--immediate-mode", "-B", "8192", "arp"],
        {
          onLine: (line) => {
            const frame = parseTcpdumpArp(line);
            if (frame) this.captured.push(frame);
          },
        },
      );
    }
    const frame = arpRequestFrame({ senderMac: host.mac, senderIp: host.ipv4, targetIp: this.address });
    this.asker = lan.start(
      host,
      `arp-asker-${host.namespace}`,
      process.execPath,
      ["-e", ASKER, addonPath(), host.iface, frame.toString("hex"), String(this.intervalMs)],
      {
        onLine: (line) => {
          const [kind, at, mac] = line.split(" ");
          if (kind !== "request" && kind !== "reply") return;
          const [src, dst] = kind === "request" ? [host.mac, "ff:ff:ff:ff:ff:ff"] : [mac!, host.mac];
          this.asked.push({ at: Number(at), kind, src, dst, address: this.address });
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
  }
}

// One request per tick, never a catch-up burst: answers are paired with the request before them, so two
// requests sent together would make the first look unanswered. Its socket receives every ARP frame but its
// own (outgoing ones are ignored); only replies for the address to this client are printed. Times are ms
// since the epoch at sub-millisecond resolution.
const ASKER = `
const [addonPath, iface, hex, interval] = process.argv.slice(1);
const addon = require(addonPath);
const request = Buffer.from(hex, "hex");
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
const mac = (b) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(":");
const handle = addon.open(iface, (frames) => {
  const at = now();
  for (const f of frames ?? []) {
    if (f.length < 42 || f.readUInt16BE(12) !== 0x0806 || f.readUInt16BE(20) !== 2) continue;
    if (!f.subarray(0, 6).equals(request.subarray(6, 12)) || !f.subarray(28, 32).equals(request.subarray(38, 42))) continue;
    console.log("reply " + at + " " + mac(f.subarray(6, 12)));
  }
});
setInterval(() => { const at = now(); if (addon.send(handle, request) === 0) console.log("request " + at); }, Number(interval));`;
