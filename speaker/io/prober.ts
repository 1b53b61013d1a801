// Probes the LAN for an address before this node answers for it (RFC 5227's ARP Probe; for IPv6 duplicate
// address detection, RFC 4862): three probes 150 ms apart, then half a second for late answers, about 0.8 s
// in all, ended early by the first answer. An ARP frame from the address, or a Neighbor Advertisement for it,
// by a MAC that is none of this node's interfaces means another host holds it — unless it is the MAC of a
// speaker handing the address over to this node (make-before-break: it answers until this node does). Such
// a speaker may say so a moment after its answer arrives, so answers are judged at each step, not on arrival.
import { setTimeout as sleep } from "node:timers/promises";
import { addressHolder, probeFrame } from "../packets/probe.ts";

export interface ProbeTarget {
  readonly mac: string;
  send(frames: readonly Buffer[]): number;
}

export interface ProbeTiming {
  readonly count: number;
  readonly intervalMs: number;
  readonly waitMs: number;
}

export const DEFAULT_PROBE_TIMING: ProbeTiming = { count: 3, intervalMs: 150, waitMs: 500 };

export class AddressProber {
  private readonly pending = new Map<string, Set<string>>();
  private readonly ownMacs: () => ReadonlySet<string>;
  private readonly timing: ProbeTiming;
  private readonly handingOver: (mac: string) => boolean;

  constructor(
    ownMacs: () => ReadonlySet<string>,
    timing: ProbeTiming = DEFAULT_PROBE_TIMING,
    handingOver: (mac: string) => boolean = () => false,
  ) {
    this.ownMacs = ownMacs;
    this.timing = timing;
    this.handingOver = handingOver;
  }

  /** Every received frame goes through here; it costs a size check while no probe is under way. */
  seen(frame: Buffer): void {
    if (this.pending.size === 0) return;
    const sender = addressHolder(frame);
    if (!sender) return;
    const heard = this.pending.get(sender.ip);
    if (heard && !this.ownMacs().has(sender.mac)) heard.add(sender.mac);
  }

  /** The MAC of another host holding `address`, or undefined when nobody answered. */
  async probe(address: string, targets: () => readonly ProbeTarget[]): Promise<string | undefined> {
    const heard = new Set<string>();
    this.pending.set(address, heard);
    const found = () => [...heard].find((mac) => !this.handingOver(mac));
    try {
      for (let i = 0; i < this.timing.count && found() === undefined; i++) {
        for (const target of targets()) target.send([probeFrame(address, target.mac)]);
        await sleep(this.timing.intervalMs);
      }
      if (found() === undefined) await sleep(this.timing.waitMs);
      return found();
    } finally {
      if (this.pending.get(address) === heard) this.pending.delete(address);
    }
  }
}
