// One interface's packet socket and the answering loop on it: every frame goes through the pure respond()
// of speaker/packets against the addresses this node owns at that instant, so an address stops being
// answered the moment the election takes it away. Replies are rate-limited per interface, so an ARP flood
// costs bounded CPU and bandwidth; everything dropped is counted.
import { solicitedNodeMulticast } from "../packets/ndp.ts";
import { ipv6Bytes } from "../packets/ipv6.ts";
import { ipv6MulticastMac, macBytes } from "../packets/mac.ts";
import { respond } from "../packets/respond.ts";
import type { NativeSocketStats, PacketAddon, SocketHandle } from "./addon.ts";
import type { MulticastGroups } from "./multicastGroups.ts";

export interface AnnouncerHooks {
  received(count: number): void;
  replied(protocol: "arp" | "ndp", address: string): void;
  dropped(reason: string, count?: number): void;
  sendFailed(errno: number): void;
  /** Joining or leaving a solicited-node multicast group failed. */
  groupFailed(group: string, err: Error): void;
  /** The socket failed (the interface went away); the announcer has closed itself. */
  failed(errno: number): void;
  /** Every frame, while conflict probes are under way (see io/prober.ts); absent: nobody listens. */
  frame?(frame: Buffer): void;
}

export interface AnnouncerOptions {
  /** Replies per second on this interface; 0 for no limit. */
  readonly maxRepliesPerSecond: number;
  /** IP-level group membership (MLD reports) besides the packet socket's own. */
  readonly ipv6Groups?: MulticastGroups;
}

export class InterfaceAnnouncer {
  readonly name: string;
  readonly mac: string;
  private readonly addon: PacketAddon;
  private readonly hooks: AnnouncerHooks;
  private readonly handle: SocketHandle;
  private owned: ReadonlySet<string> = new Set();
  /** Solicited-node multicast MACs joined, with how many owned IPv6 addresses map to each. */
  private readonly groups = new Map<string, number>();
  private readonly limit: number;
  private readonly ipv6Groups: MulticastGroups | undefined;
  private tokens: number;
  private refilledAt = performance.now();
  private lastStats: NativeSocketStats = {
    received: 0,
    truncated: 0,
    vlanTagged: 0,
    kernelDrops: 0,
    linkDown: 0,
  };
  private closed = false;

  constructor(
    addon: PacketAddon,
    iface: { name: string; mac: string },
    options: AnnouncerOptions,
    hooks: AnnouncerHooks,
  ) {
    this.addon = addon;
    this.name = iface.name;
    this.mac = iface.mac;
    this.hooks = hooks;
    this.limit = options.maxRepliesPerSecond;
    this.ipv6Groups = options.ipv6Groups;
    this.tokens = this.limit;
    this.handle = addon.open(iface.name, (frames, errno) => this.onFrames(frames, errno));
  }

  /** The addresses to answer for from now on; IPv6 ones also need their solicited-node group joined. */
  setOwned(owned: ReadonlySet<string>): void {
    if (this.closed) return;
    const before = this.owned;
    this.owned = new Set(owned);
    for (const address of this.owned) if (!before.has(address)) this.group(address, +1);
    for (const address of before) if (!this.owned.has(address)) this.group(address, -1);
  }

  /** Sends frames (gratuitous announcements); returns how many the kernel accepted. */
  send(frames: readonly Buffer[]): number {
    if (this.closed) return 0;
    let sent = 0;
    for (const frame of frames) {
      const errno = this.addon.send(this.handle, frame);
      if (errno === 0) sent++;
      else this.hooks.sendFailed(errno);
    }
    return sent;
  }

  /** Reports what the kernel counted since the last call (frames lost because the socket buffer was full). */
  collectStats(): void {
    if (this.closed) return;
    const stats = this.addon.stats(this.handle);
    const lost = stats.kernelDrops - this.lastStats.kernelDrops;
    const truncated = stats.truncated - this.lastStats.truncated;
    const tagged = stats.vlanTagged - this.lastStats.vlanTagged;
    if (lost > 0) this.hooks.dropped("KernelQueueFull", lost);
    if (truncated > 0) this.hooks.dropped("Oversized", truncated);
    if (tagged > 0) this.hooks.dropped("VlanTagged", tagged);
    this.lastStats = stats;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const address of this.owned) this.group(address, -1);
    this.owned = new Set();
    this.addon.close(this.handle);
  }

  private onFrames(frames: Buffer[], errno: number): void {
    if (this.closed) return;
    if (frames.length > 0) this.hooks.received(frames.length);
    for (const frame of frames) {
      this.hooks.frame?.(frame);
      const response = respond(frame, this.owned, this.mac);
      if (response.action === "drop") this.hooks.dropped(response.reason);
      if (response.action !== "reply") continue;
      if (!this.takeToken()) {
        this.hooks.dropped("RateLimited");
        continue;
      }
      const sendErrno = this.addon.send(this.handle, response.frame);
      if (sendErrno === 0) this.hooks.replied(response.protocol, response.address);
      else this.hooks.sendFailed(sendErrno);
    }
    if (errno !== 0) {
      this.close();
      this.hooks.failed(errno);
    }
  }

  private takeToken(): boolean {
    if (this.limit <= 0) return true;
    const now = performance.now();
    this.tokens = Math.min(this.limit, this.tokens + ((now - this.refilledAt) * this.limit) / 1000);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private group(address: string, delta: 1 | -1): void {
    if (!address.includes(":")) return;
    const group = solicitedNodeMulticast(address);
    const mac = ipv6MulticastMac(ipv6Bytes(group));
    const count = (this.groups.get(mac) ?? 0) + delta;
    if (count > 0) this.groups.set(mac, count);
    else this.groups.delete(mac);
    if ((delta > 0 && count === 1) || (delta < 0 && count === 0)) {
      try {
        this.addon.multicast(this.handle, Buffer.from(macBytes(mac)), delta > 0);
      } catch (err) {
        // Without the group the NIC may filter solicitations out; answering what still arrives is better
        // than failing the whole election.
        this.hooks.groupFailed(group, err as Error);
      }
      if (delta > 0) this.ipv6Groups?.join(group, this.name);
      else this.ipv6Groups?.leave(group, this.name);
    }
  }
}
