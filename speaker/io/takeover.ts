// Gratuitous announcements when this node takes an address over: a short burst (at 0 ms, 500 ms and 1 s by
// default, so one lost frame or a neighbour's ARP lock time does not leave it pointing at the old node),
// then optionally a periodic refresh. Lost addresses are cancelled at once: a node never announces an
// address it no longer owns.
import { takeoverFrames } from "../packets/announce.ts";

export interface TakeoverTarget {
  readonly name: string;
  readonly mac: string;
  send(frames: readonly Buffer[]): number;
}

export interface TakeoverOptions {
  readonly burstOffsetsMs: readonly number[];
  /** Re-announce every address this often after the burst; 0 for never. */
  readonly periodicMs: number;
}

export const DEFAULT_BURST_MS: readonly number[] = [0, 500, 1000];

export class TakeoverAnnouncements {
  private readonly timers = new Map<string, NodeJS.Timeout[]>();
  private readonly options: TakeoverOptions;
  /** The interfaces an address is announced on (L2Advertisements may name some only). */
  private readonly targets: (address: string) => readonly TakeoverTarget[];
  private readonly sent: (target: TakeoverTarget, protocol: "arp" | "ndp", frames: number) => void;

  constructor(
    options: TakeoverOptions,
    targets: (address: string) => readonly TakeoverTarget[],
    sent: (target: TakeoverTarget, protocol: "arp" | "ndp", frames: number) => void,
  ) {
    this.options = options;
    this.targets = targets;
    this.sent = sent;
  }

  /** Starts announcing newly owned addresses and stops announcing lost ones. */
  update(owned: ReadonlySet<string>): void {
    for (const address of [...this.timers.keys()]) if (!owned.has(address)) this.cancel(address);
    for (const address of owned) if (!this.timers.has(address)) this.start(address);
  }

  /** Starts the burst again for addresses whose neighbours may have been pointed elsewhere meanwhile. */
  restart(addresses: Iterable<string>): void {
    for (const address of addresses) {
      this.cancel(address);
      this.start(address);
    }
  }

  /** Announces `address` on an interface that appeared after the takeover. */
  announceOn(target: TakeoverTarget, addresses: Iterable<string>): void {
    for (const address of addresses) this.announce(address, [target]);
  }

  stop(): void {
    for (const address of [...this.timers.keys()]) this.cancel(address);
  }

  private start(address: string): void {
    const timers = this.options.burstOffsetsMs.map((offset) =>
      setTimeout(() => this.announce(address, this.targets(address)), offset),
    );
    if (this.options.periodicMs > 0) {
      const last = Math.max(0, ...this.options.burstOffsetsMs);
      timers.push(
        setTimeout(() => {
          this.announce(address, this.targets(address));
          const interval = setInterval(
            () => this.announce(address, this.targets(address)),
            this.options.periodicMs,
          );
          this.timers.get(address)?.push(interval);
        }, last + this.options.periodicMs),
      );
    }
    this.timers.set(address, timers);
  }

  private cancel(address: string): void {
    for (const timer of this.timers.get(address) ?? []) clearTimeout(timer);
    this.timers.delete(address);
  }

  private announce(address: string, targets: readonly TakeoverTarget[]): void {
    const protocol = address.includes(":") ? "ndp" : "arp";
    for (const target of targets) {
      const sent = target.send(takeoverFrames(address, target.mac));
      if (sent > 0) this.sent(target, protocol, sent);
    }
  }
}
