// The messages of make-before-break (the plan is the pure speaker/l2/handover.ts). A node holding an address the
// election gave to another asks that announcer, at once and then every probe interval until the hold ends,
// to say when it answers the address (`handover`). The announcer replies with the asked addresses it
// answers already (`answering`), and remembers the others, so that it tells the asker the moment it starts
// answering them. The holder stops answering on that reply: the overlap is one datagram's trip. Repeating
// the question covers a lost datagram, and the askers are forgotten after a while, so memory stays bounded.
import { nextExpiry, planHandover, type Hold, type Interfaces } from "./handover.ts";
import type { AddressMessage } from "../membership/memberlist.ts";

export interface HandoverDeps {
  readonly self: string;
  readonly intervalMs: number;
  readonly maxHoldMs: number;
  readonly now?: () => number;
  /** Sends a hand-over message to a node (Memberlist.tell). */
  readonly tell: (
    node: string,
    type: AddressMessage["type"],
    addresses: readonly string[],
    macs?: readonly string[],
  ) => void;
  /** The MACs this node answers with, named in its questions. */
  readonly macs: () => readonly string[];
  /** The addresses this node answers at this moment. */
  readonly answering: () => ReadonlySet<string>;
  /** A confirmation arrived or a hold expired: plan again. */
  readonly changed: () => void;
}

/** How long an announcer remembers a question: the holder repeats it every interval anyway. */
const ASKED_TTL_FACTOR = 10;
/** How long a holder's MACs are known as a speaker's: longer than a conflict probe (about 1 s). */
const HOLDER_MAC_TTL_MS = 30_000;

export class Handovers {
  private readonly deps: HandoverDeps;
  private readonly now: () => number;
  private held: ReadonlyMap<string, Hold> = new Map();
  /** Held addresses whose announcer said it answers them, with that announcer. */
  private readonly confirmations = new Map<string, string>();
  /** As an announcer: who asked about an address it does not answer yet, and when they last asked. */
  private readonly askers = new Map<string, Map<string, number>>();
  /** MACs of speakers that asked this node to take addresses over, with when they last asked. */
  private readonly holderMacs = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: HandoverDeps) {
    this.deps = deps;
    this.now = deps.now ?? Date.now;
  }

  /**
   * Whether `mac` belongs to a speaker handing addresses over to this one: its answers to this node's
   * conflict probes for those addresses come from the cluster, not from a host that holds the address.
   */
  isHolderMac(mac: string): boolean {
    const at = this.holderMacs.get(mac);
    return at !== undefined && this.now() - at <= HOLDER_MAC_TTL_MS;
  }

  /** The addresses held for another announcer. */
  get holding(): ReadonlyMap<string, Hold> {
    return this.held;
  }

  /**
   * What to answer: `won`, plus what `answering` holds until the new announcers confirm. Asks the announcers
   * of newly held addresses at once.
   */
  plan(
    won: ReadonlyMap<string, Interfaces>,
    answering: ReadonlyMap<string, Interfaces>,
    winners: ReadonlyMap<string, string | undefined>,
  ) {
    const previous = this.held;
    const plan = planHandover({
      self: this.deps.self,
      now: this.now(),
      maxHoldMs: this.deps.maxHoldMs,
      won,
      answering,
      winners,
      held: previous,
      confirmed: (address, node) => this.confirmations.get(address) === node,
    });
    this.held = plan.held;
    for (const address of this.confirmations.keys())
      if (!plan.held.has(address)) this.confirmations.delete(address);
    for (const [node, addresses] of plan.waitingFor) {
      const fresh = addresses.filter((a) => previous.get(a)?.to !== node);
      if (fresh.length > 0) this.deps.tell(node, "handover", fresh, this.deps.macs());
    }
    this.schedule();
    return plan;
  }

  received(message: AddressMessage): void {
    if (message.type === "handover") {
      for (const mac of message.macs ?? []) this.holderMacs.set(mac, this.now());
      return this.asked(message.from, message.addresses);
    }
    let confirmed = false;
    for (const address of message.addresses) {
      if (this.held.get(address)?.to !== message.from) continue;
      this.confirmations.set(address, message.from);
      confirmed = true;
    }
    if (confirmed) this.deps.changed();
  }

  /**
   * This node started answering `gained`: tell whoever waits for them, once the work of this turn of the
   * event loop (the decision's records, Events and logs) is done and frames already queued are answered.
   * Told at once, the old announcer would stop while this one is still busy, and requests arriving meanwhile
   * would wait tens of milliseconds for an answer.
   */
  answered(gained: readonly string[]): void {
    setImmediate(() => this.tellAskers(gained));
  }

  private tellAskers(gained: readonly string[]): void {
    const byAsker = new Map<string, string[]>();
    const stale = this.now() - ASKED_TTL_FACTOR * this.deps.intervalMs;
    for (const address of gained) {
      const askers = this.askers.get(address);
      if (!askers) continue;
      this.askers.delete(address);
      for (const [node, at] of askers)
        if (at >= stale) byAsker.set(node, [...(byAsker.get(node) ?? []), address]);
    }
    for (const [node, addresses] of byAsker) this.deps.tell(node, "answering", addresses);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private asked(from: string, addresses: readonly string[]): void {
    const answering = this.deps.answering();
    const now = this.now();
    const yes = addresses.filter((a) => answering.has(a));
    if (yes.length > 0) this.deps.tell(from, "answering", yes);
    for (const address of addresses) {
      if (answering.has(address)) continue;
      const askers = this.askers.get(address) ?? new Map<string, number>();
      askers.set(from, now);
      this.askers.set(address, askers);
    }
    this.forgetStaleAskers(now);
  }

  private forgetStaleAskers(now: number): void {
    for (const [mac, at] of this.holderMacs) if (now - at > HOLDER_MAC_TTL_MS) this.holderMacs.delete(mac);
    const stale = now - ASKED_TTL_FACTOR * this.deps.intervalMs;
    for (const [address, askers] of this.askers) {
      for (const [node, at] of askers) if (at < stale) askers.delete(node);
      if (askers.size === 0) this.askers.delete(address);
    }
  }

  /** While holding: ask again every interval (a datagram may be lost) and plan again when a hold expires. */
  private schedule(): void {
    if (this.held.size === 0) return this.stop();
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const byNode = new Map<string, string[]>();
      for (const [address, hold] of this.held) byNode.set(hold.to, [...(byNode.get(hold.to) ?? []), address]);
      for (const [node, addresses] of byNode) this.deps.tell(node, "handover", addresses, this.deps.macs());
      const expiry = nextExpiry(this.held, this.deps.maxHoldMs);
      if (expiry !== undefined && this.now() >= expiry) this.deps.changed();
      this.schedule();
    }, this.deps.intervalMs);
  }
}
