// Failure detection between speakers over UDP, fast and O(n) in messages.
//
// Protocol. Every speaker knows every potential member from Kubernetes (each Node's InternalIP, all on the
// same port), so there is no seed list and no gossip of addresses, only of liveness:
//  - Probing: every interval T each speaker pings its k successors on the ring of live node names (and one
//    random Node, which finds speakers it has not heard of yet); every ping is acked. A successor from
//    which nothing has been heard for the timeout D is declared dead, unless its node's kernel says its
//    process still exists (a TCP connection to the membership port, started shortly before D, completes:
//    it is starved of CPU, not dead; silence.ts), which spares it for up to 10 D; a refused connection (the
//    process is gone) declares it dead at once, before D. Each live node is watched
//    by its k predecessors, so one lost probe never decides alone, and a speaker that hears from none of its
//    own predecessors assumes it is the one cut off and declares nobody dead.
//  - News (a death, a departure on SIGTERM, a restart in place, a refutation, a start) is sent directly to every
//    Node: one hop, so the whole cluster acts on it within a round-trip instead of gossip rounds. Such events are
//    rare.
//  - Repair: pings and acks carry a digest of the sender's live set; when two views differ the two exchange
//    their full views (at most once per peer per second), which also repairs lost news. A speaker wrongly
//    declared dead learns it this way and refutes with a higher incarnation.
//  - Restart in place (restartHolds.ts): a speaker its DaemonSet replaces says `restarting` instead of leaving;
//    it stays a member, off the ring, for at most RESTART_HOLD_MS, so its addresses wait for its replacement.
//  - Hand-over: a node still answering an address the election moved asks the new announcer to say when it
//    answers it (`handover`, `answering`; handover.ts), and keeps answering until then: make-before-break.
//
// Cost, with n speakers, k = 2 and T = 100 ms: each speaker sends (k + 1) pings and receives as many acks
// per interval, 30 pings + 30 acks = 60 datagrams/s sent and about 60 received (~100 bytes each), whatever
// n is; cluster-wide 60·n datagrams/s, e.g. 60,000/s for 1,000 nodes (about 6 MB/s over the whole fabric).
// An event costs n - 1 datagrams from one speaker (and n - 1 small acks for a start). Detection of a lost or
// partitioned node takes D + T (600 ms with D = 500 ms), of a crashed speaker on a live node D - 2T to
// D - T (300-400 ms), independent of n; a silent speaker costs one TCP connection attempt per D.
import { createSocket, type Socket } from "node:dgram";
import { isIPv6, type Server } from "node:net";
import {
  addressMessages,
  decodeMessage,
  encodeMessage,
  factMessages,
  type Fact,
  type Message,
} from "./messages.ts";
import { listenPresence, probePresence } from "./presence.ts";
import { RestartHolds } from "./restartHolds.ts";
import { judgeSilence, silenceTimes, starved, type PresenceProbe, type SilenceTimes } from "./silence.ts";
import { MembershipView, type MergeOutcome } from "./view.ts";

export interface MemberlistOptions {
  readonly self: string;
  readonly port: number;
  /** Where to listen; both families when unset. */
  readonly bindAddress?: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly fanout: number;
  /** Shared secret: every datagram carries an HMAC, unauthenticated ones are dropped. */
  readonly secret?: Buffer;
  readonly now?: () => number;
  readonly onLiveChange?: (live: ReadonlySet<string>) => void;
  readonly onEvent?: (event: MembershipEvent) => void;
  /** How long a restarting member keeps its addresses (default RESTART_HOLD_MS). */
  readonly restartHoldMs?: number;
  /** Hand-over messages (`handover`, `answering`), also while leaving: they carry the addresses' move. */
  readonly onAddresses?: (message: AddressMessage) => void;
}

export type AddressMessage = Extract<Message, { type: "handover" | "answering" }>;

export type MembershipEvent =
  | { readonly kind: "sent" | "received"; readonly type: Message["type"] }
  | { readonly kind: "dropped"; readonly reason: "malformed" | "unknown-sender" }
  | { readonly kind: "declared-dead"; readonly node: string }
  /** A probe round came late (this process was starved of CPU): nobody was judged on it. */
  | { readonly kind: "starved" }
  /** A silent successor's process was found to exist (its node's kernel took a connection): not judged dead. */
  | { readonly kind: "stalled"; readonly node: string }
  | { readonly kind: "refuted"; readonly incarnation: number }
  | { readonly kind: "sync" };

const SYNC_INTERVAL_MS = 1000;
const LEAVE_GRACE_MS = 500;
const ISOLATION_FACTOR = 10;

export class Memberlist {
  readonly view: MembershipView;
  private readonly options: MemberlistOptions;
  private readonly now: () => number;
  private peers = new Map<string, string>();
  private readonly sockets: Socket[] = [];
  private readonly lastHeard = new Map<string, number>();
  /** Successors being probed, with when probing began (a new successor gets a full timeout). */
  private readonly watching = new Map<string, number>();
  private readonly lastSync = new Map<string, number>();
  /** The latest presence probe of each silent successor. */
  private readonly probes = new Map<string, PresenceProbe>();
  private readonly times: SilenceTimes;
  private presence: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = Infinity;
  /** When the last probe round ran (to tell a starved round). */
  private lastRoundAt: number | undefined;
  private notifyPending = false;
  private leaving = false;
  private readonly holds: RestartHolds;

  constructor(options: MemberlistOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.times = silenceTimes(options.intervalMs, options.timeoutMs);
    this.holds = new RestartHolds(options.restartHoldMs);
    // The start time orders this run after any earlier run of the same node.
    this.view = new MembershipView(options.self, this.now());
  }

  /** Settled: the joins have been answered, so the live set is worth acting on. */
  get ready(): boolean {
    return this.now() - this.startedAt >= this.options.timeoutMs;
  }

  /** The members that hold addresses: live, or restarting in place. */
  live(): Set<string> {
    return new Set(this.view.members());
  }

  /** Every potential member and its address, from the Nodes in Kubernetes. New ones are greeted. */
  setPeers(peers: ReadonlyMap<string, string>): void {
    const added = [...peers.keys()].filter((node) => !this.peers.has(node) && node !== this.options.self);
    this.peers = new Map(peers);
    this.peers.delete(this.options.self);
    if (this.view.retain(new Set(this.peers.keys()))) this.changed();
    if (this.sockets.length > 0) for (const node of added) this.sendJoin(node);
  }

  async start(): Promise<void> {
    const families = this.options.bindAddress
      ? [isIPv6(this.options.bindAddress) ? ("udp6" as const) : ("udp4" as const)]
      : (["udp4", "udp6"] as const);
    for (const type of families) {
      const socket = createSocket({ type, ipv6Only: type === "udp6" });
      socket.on("message", (datagram) => this.receive(datagram));
      socket.on("error", () => undefined);
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once("error", reject);
          socket.bind(this.options.port, this.options.bindAddress, () => {
            socket.off("error", reject);
            resolve();
          });
        });
        this.sockets.push(socket);
      } catch (err) {
        socket.close();
        // A host without IPv6 still works over IPv4; failing to bind anything is fatal.
        if (this.options.bindAddress || type === "udp4") throw err;
      }
    }
    try {
      this.presence = await listenPresence(this.options.port, this.options.bindAddress);
    } catch (err) {
      this.stop();
      // Without it, peers would take any other listener on the port for this speaker's process.
      throw new Error(
        `cannot listen on TCP port ${this.options.port} (--memberlist-port), which the membership needs beside UDP: ${(err as Error).message}`,
        { cause: err },
      );
    }
    this.startedAt = this.now();
    for (const node of this.peers.keys()) this.sendJoin(node);
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    setTimeout(() => this.changed(), this.options.timeoutMs).unref();
  }

  /** SIGTERM: tell every speaker at once that this one is gone, so they take over without waiting. */
  async leave(): Promise<void> {
    await this.announceLeave();
    this.stop();
  }

  /**
   * Tells every speaker this one is gone (or, `restarting`, that its replacement comes), and stops probing, but
   * keeps the sockets open: the hand-over messages of the addresses still answered here keep flowing until stop().
   */
  async announceLeave(status: "left" | "restarting" = "left"): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    clearInterval(this.timer);
    // Resolves once the departure is on the wire (or after a short grace).
    const sent = this.broadcast([this.view.selfFact(status)]);
    await Promise.race([Promise.all(sent), new Promise((resolve) => setTimeout(resolve, LEAVE_GRACE_MS))]);
  }

  /** Sends a hand-over message to one node, split into as many datagrams as its addresses need. */
  tell(
    node: string,
    type: AddressMessage["type"],
    addresses: readonly string[],
    macs?: readonly string[],
  ): void {
    for (const datagram of addressMessages(type, this.options.self, addresses, this.options.secret, macs))
      void this.sendRaw(node, datagram, type);
  }

  /** Stops without a word, as a crash would. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const socket of this.sockets.splice(0)) socket.close();
    this.presence?.close();
    this.presence = undefined;
  }

  /**
   * One probe round: judge silent successors (probing the presence of their process first), then ping the
   * successors and one random Node.
   */
  tick(): void {
    const now = this.now();
    const over = this.holds.expired(now, (node) => this.view.get(node));
    if (over.length > 0) this.mergeAll(over);
    const successors = this.view.successors(this.options.fanout);
    for (const node of this.watching.keys()) {
      if (successors.includes(node)) continue;
      this.watching.delete(node);
      this.probes.delete(node);
    }
    for (const node of successors) if (!this.watching.has(node)) this.watching.set(node, now);

    const late = starved(this.lastRoundAt, now, this.options.intervalMs);
    this.lastRoundAt = now;
    if (late) this.options.onEvent?.({ kind: "starved" });
    const dead: string[] = [];
    for (const node of successors) {
      const verdict = judgeSilence(now, this.heardSince(node), this.probes.get(node), this.times);
      if (verdict === "probe") this.probePresence(node, now);
      if (verdict === "dead") dead.push(node);
    }
    const silent = successors.filter((node) => now - this.heardSince(node) > this.options.timeoutMs);
    if (!late && dead.length > 0 && this.connected(now, new Set([...silent, ...dead]))) {
      for (const node of dead) this.declareDead(node);
    }
    const targets = new Set(this.view.successors(this.options.fanout));
    const others = [...this.peers.keys()].filter((node) => !targets.has(node));
    const random = others[Math.floor(Math.random() * others.length)];
    if (random !== undefined) targets.add(random);
    const ping = {
      type: "ping",
      from: this.options.self,
      incarnation: this.view.incarnation,
      digest: this.view.digest(),
    } as const;
    for (const node of targets) this.send(node, ping);
  }

  /** Asks the node's kernel whether the speaker's process exists: a refusal is judged at once, the rest in rounds. */
  private probePresence(node: string, now: number): void {
    const address = this.peers.get(node);
    if (!address) return;
    const probe: PresenceProbe = { startedAt: now };
    this.probes.set(node, probe);
    void probePresence(address, this.options.port, this.options.timeoutMs).then((result) => {
      // A newer probe, or a declared death, supersedes this one.
      if (this.probes.get(node) !== probe) return;
      const settled = { ...probe, result, settledAt: this.now() };
      this.probes.set(node, settled);
      if (result === "process") this.options.onEvent?.({ kind: "stalled", node });
      // A refusal is proof that the process is gone (and that this speaker reaches the node): act on it now
      // rather than at the next round. Anything else waits for the rounds' judgement.
      if (result !== "no-process" || this.leaving || this.sockets.length === 0) return;
      if (judgeSilence(settled.settledAt, this.heardSince(node), settled, this.times) === "dead")
        this.declareDead(node);
    });
  }

  private heardSince(node: string): number {
    return Math.max(this.watching.get(node) ?? 0, this.lastHeard.get(node) ?? 0);
  }

  /**
   * Whether this speaker can trust its own silence readings. It can when it heard from some node that is
   * not silent within the timeout. When every other live node is silent, the likelier story with two or
   * more of them is that this speaker is the one cut off, so it waits ISOLATION_FACTOR timeouts before
   * believing they all died; with a single other node there is no telling, and it believes it at once.
   */
  private connected(now: number, silent: ReadonlySet<string>): boolean {
    for (const [node, at] of this.lastHeard) {
      if (!silent.has(node) && now - at <= this.options.timeoutMs) return true;
    }
    const others = this.view.live().filter((node) => node !== this.options.self);
    if (others.some((node) => !silent.has(node))) return !this.hasPredecessorsBesides(silent);
    if (others.length < 2) return true;
    const lastHeardFromAnyone = Math.max(this.startedAt, ...this.lastHeard.values());
    return now - lastHeardFromAnyone > ISOLATION_FACTOR * this.options.timeoutMs;
  }

  /** Predecessors probe this node every interval: if one exists and was silent too, this node is cut off. */
  private hasPredecessorsBesides(silent: ReadonlySet<string>): boolean {
    return this.view.predecessors(this.options.fanout).some((node) => !silent.has(node));
  }

  private declareDead(node: string): void {
    const fact = this.view.get(node);
    if (!fact || fact.status !== "alive") return;
    this.watching.delete(node);
    this.probes.delete(node);
    this.options.onEvent?.({ kind: "declared-dead", node });
    this.mergeAll([{ node, incarnation: fact.incarnation, status: "dead" }]);
    void this.broadcast([{ node, incarnation: fact.incarnation, status: "dead" }]);
  }

  private receive(datagram: Buffer): void {
    const message = decodeMessage(datagram, this.options.secret);
    if (!message) {
      this.options.onEvent?.({ kind: "dropped", reason: "malformed" });
      return;
    }
    if (!this.peers.has(message.from)) {
      // Not a Node this speaker knows (yet): nothing it says can be placed on the ring.
      this.options.onEvent?.({ kind: "dropped", reason: "unknown-sender" });
      return;
    }
    if (message.type === "handover" || message.type === "answering") {
      this.options.onEvent?.({ kind: "received", type: message.type });
      this.options.onAddresses?.(message);
      return;
    }
    // A leaving speaker's view no longer matters to anyone.
    if (this.leaving) return;
    this.options.onEvent?.({ kind: "received", type: message.type });
    this.lastHeard.set(message.from, this.now());
    switch (message.type) {
      case "ping":
      case "join": {
        this.mergeAll([{ node: message.from, incarnation: message.incarnation, status: "alive" }]);
        const ack = {
          type: "ack",
          from: this.options.self,
          incarnation: this.view.incarnation,
          digest: this.view.digest(),
        } as const;
        this.send(message.from, ack);
        if (message.type === "ping") this.compareViews(message.from, message.digest);
        break;
      }
      case "ack":
        this.mergeAll([{ node: message.from, incarnation: message.incarnation, status: "alive" }]);
        this.compareViews(message.from, message.digest);
        break;
      case "facts":
        this.mergeAll(message.facts);
        if (message.ask && message.digest !== undefined && message.digest !== this.view.digest()) {
          this.sendView(message.from, false);
        }
        break;
    }
  }

  private compareViews(node: string, digest: string): void {
    // While joining, the acks of every node are still arriving and views differ as a matter of course.
    if (!this.ready || digest === this.view.digest()) return;
    const now = this.now();
    if (now - (this.lastSync.get(node) ?? -Infinity) < SYNC_INTERVAL_MS) return;
    this.lastSync.set(node, now);
    this.sendView(node, true);
  }

  private sendView(node: string, ask: boolean): void {
    this.options.onEvent?.({ kind: "sync" });
    const datagrams = factMessages(
      this.options.self,
      this.view.allFacts(),
      { digest: this.view.digest(), ask },
      this.options.secret,
    );
    for (const datagram of datagrams) void this.sendRaw(node, datagram, "facts");
  }

  private mergeAll(facts: readonly Fact[]): void {
    let outcome: MergeOutcome = "unchanged";
    for (const fact of facts) {
      if (fact.node !== this.options.self && !this.peers.has(fact.node)) continue;
      const result = this.view.merge(fact);
      if (result === "changed") this.holds.noted(fact, this.now());
      if (result === "refute" && !this.leaving) {
        this.options.onEvent?.({ kind: "refuted", incarnation: this.view.incarnation });
        void this.broadcast([this.view.selfFact()]);
      }
      if (result === "changed") outcome = "changed";
    }
    if (outcome === "changed") this.changed();
  }

  /** Reports a changed live set once per turn of the event loop, however many facts changed it. */
  private changed(): void {
    if (this.notifyPending) return;
    this.notifyPending = true;
    queueMicrotask(() => {
      this.notifyPending = false;
      this.options.onLiveChange?.(this.live());
    });
  }

  /** Sends to every Node; the promises settle when each datagram has been handed to the kernel. */
  private broadcast(facts: readonly Fact[]): Promise<void>[] {
    const datagrams = factMessages(this.options.self, facts, {}, this.options.secret);
    const sent: Promise<void>[] = [];
    for (const node of this.peers.keys())
      for (const datagram of datagrams) sent.push(this.sendRaw(node, datagram, "facts"));
    return sent;
  }

  private sendJoin(node: string): void {
    this.send(node, { type: "join", from: this.options.self, incarnation: this.view.incarnation });
  }

  private send(node: string, message: Message): void {
    void this.sendRaw(node, encodeMessage(message, this.options.secret), message.type);
  }

  private sendRaw(node: string, datagram: Buffer, type: Message["type"]): Promise<void> {
    const address = this.peers.get(node);
    const socket = address && this.sockets.find((s) => (s.address().family === "IPv6") === isIPv6(address));
    if (!address || !socket) return Promise.resolve();
    this.options.onEvent?.({ kind: "sent", type });
    return new Promise((resolve) => socket.send(datagram, this.options.port, address, () => resolve()));
  }
}
