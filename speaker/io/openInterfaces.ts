// The interfaces the speaker answers on, kept open for as long as it runs: opened at start and looked at again
// every --interface-rescan-ms (interfaceScan.ts), their counters read every few seconds, all closed at the end.
// Which addresses each answers is the L2 mode's to say (l2/answering.ts); this is only the sockets.
import type { Logger } from "pino";
import type { SpeakerMetrics } from "../metrics.ts";
import type { PacketAddon } from "./addon.ts";
import type { InterfaceAnnouncer } from "./interfaceAnnouncer.ts";
import { rescanInterfaces, type InterfaceScanDeps } from "./interfaceScan.ts";
import { ipv6MulticastGroups, type MulticastGroups } from "./multicastGroups.ts";

const STATS_INTERVAL_MS = 5000;

export interface OpenInterfacesDeps extends Pick<InterfaceScanDeps, "frame" | "opened" | "changed"> {
  readonly addon: PacketAddon;
  readonly config: InterfaceScanDeps["config"] & { readonly interfaceRescanMs: number };
  readonly metrics: SpeakerMetrics;
  readonly log: Logger;
}

export class OpenInterfaces {
  /** By interface name. */
  readonly announcers = new Map<string, InterfaceAnnouncer>();
  private readonly deps: OpenInterfacesDeps;
  private ipv6Groups: MulticastGroups | undefined;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(deps: OpenInterfacesDeps) {
    this.deps = deps;
  }

  /** Joins the IPv6 multicast groups' socket and opens the interfaces there are now. */
  async open(): Promise<void> {
    this.ipv6Groups = await ipv6MulticastGroups((err) =>
      this.deps.log.warn({ err: err.message }, "IPv6 multicast group membership failed"),
    );
    this.rescan();
  }

  /** Looks for interfaces that come and go, and reads the open ones' counters, from now on. */
  watch(): void {
    this.timers.push(
      setInterval(() => this.rescan(), this.deps.config.interfaceRescanMs),
      setInterval(() => this.announcers.forEach((a) => a.collectStats()), STATS_INTERVAL_MS),
    );
  }

  /** No more rescans from now on (the speaker is stopping); the sockets stay open until close(). */
  stopRescanning(): void {
    this.closed = true;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const announcer of this.announcers.values()) announcer.close();
    this.announcers.clear();
    this.ipv6Groups?.close();
  }

  /** Opens interfaces that appeared (or came up) and closes those that vanished or changed address. */
  private rescan(): void {
    if (this.closed) return;
    const { addon, config, metrics, log, frame, opened, changed } = this.deps;
    rescanInterfaces(this.announcers, {
      addon,
      config,
      ipv6Groups: this.ipv6Groups,
      metrics,
      log,
      frame,
      opened,
      changed,
    });
  }
}
