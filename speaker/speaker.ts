// The speaker: joins the pieces. Kubernetes says which addresses exist, which Services have ready endpoints
// where, and which Nodes are Ready; the membership protocol says which speakers are alive; from that one view
// each mode (modes/mode.ts: L2 always, BGP when FRR runs beside the speaker) announces the addresses the arbiter
// gives it (modes/arbiter.ts). The speaker owns the cache, the membership and the interfaces the L2 mode answers
// on, and decides how a stop goes: a departure or a replacement of the pod on its node.
import type { Logger } from "pino";
import type { SpeakerConfig } from "./config.ts";
import { loadAddon, type PacketAddon } from "./io/addon.ts";
import { OpenInterfaces } from "./io/openInterfaces.ts";
import type { KubeApi } from "./kube/api/client.ts";
import { readReplacement } from "./kube/replacement.ts";
import { KubeCache } from "./kube/cache.ts";
import { reportMembershipEvent } from "./membership/events.ts";
import { Memberlist } from "./membership/memberlist.ts";
import { announcedServices, nodeAddresses } from "./serviceView.ts";
import type { SpeakerMetrics } from "./metrics.ts";
import { PoolConfig } from "./poolConfig.ts";
import { shareServices } from "./modes/arbiter.ts";
import type { Mode, SpeakerView } from "./modes/mode.ts";
import { L2Mode } from "./l2/mode.ts";
import { BgpMode } from "./bgp/mode.ts";

export class Speaker {
  private readonly config: SpeakerConfig;
  private readonly api: KubeApi;
  private readonly log: Logger;
  private readonly metrics: SpeakerMetrics;
  private readonly cache: KubeCache;
  private readonly pools: PoolConfig;
  private readonly memberlist: Memberlist;
  private readonly interfaces: OpenInterfaces;
  private readonly l2: L2Mode;
  /** The BGP mode, when the speaker runs with FRR beside it. */
  private readonly bgp: BgpMode | undefined;
  /** Every mode, in the order they are given a decision. */
  private readonly modes: readonly Mode[];
  /** SIGTERM received: this node is no longer a candidate, and waits for its addresses to be taken over. */
  private leaving = false;
  private recomputePending = false;
  /** stop() was called (it reads the API before it decides how to stop). */
  private stopping = false;
  /** SIGTERM in a rolling update: the L2 addresses and BGP routes stay here for the new pod. */
  private restarting = false;
  private synced = false;
  private stopped = false;

  constructor(
    config: SpeakerConfig,
    api: KubeApi,
    log: Logger,
    metrics: SpeakerMetrics,
    addon: PacketAddon = loadAddon(),
  ) {
    this.config = config;
    this.api = api;
    this.log = log;
    this.metrics = metrics;
    this.cache = new KubeCache(api, log, {
      ...(config.namespace ? { namespace: config.namespace } : {}),
      ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
      ...(config.metallb.mode === "off"
        ? {}
        : { metallbNamespace: config.metallb.namespace, metallbRequired: config.metallb.mode === "on" }),
      ...(config.bgp ? { bgp: true } : {}),
    });
    this.pools = new PoolConfig(this.cache, log);
    const changed = () => this.scheduleRecompute();
    this.interfaces = new OpenInterfaces({
      addon,
      config,
      metrics,
      log,
      frame: (frame) => this.l2.seen(frame),
      opened: (announcer) => this.l2.opened(announcer),
      changed,
    });
    if (config.bgp) {
      this.bgp = new BgpMode({
        node: config.nodeName,
        ...config.bgp,
        api,
        log,
        metrics,
        objects: () => this.cache.bgpObjects(),
        recordsInstalled: () => this.cache.bgpRecordsInstalled(),
        changed,
      });
    }
    this.l2 = new L2Mode({
      node: config.nodeName,
      api,
      log,
      metrics,
      memberlist: config.memberlist,
      gratuitous: config.gratuitous,
      announcers: this.interfaces.announcers,
      advertisements: this.cache,
      records: () => (this.cache.l2StatusesInstalled() ? this.cache.l2Statuses() : undefined),
      tell: (node, type, addresses, macs) => this.memberlist.tell(node, type, addresses, macs),
      changed,
    });
    // BGP first: FRR is given its routes before the L2 mode's election, Events and records.
    this.modes = this.bgp ? [this.bgp, this.l2] : [this.l2];
    this.memberlist = new Memberlist({
      self: config.nodeName,
      ...config.memberlist,
      onLiveChange: (live) => {
        this.metrics.liveMembers.set(live.size);
        this.log.info({ live: [...live] }, "live speakers changed");
        this.scheduleRecompute();
      },
      onEvent: (event) => reportMembershipEvent(event, metrics, log, () => this.l2.refuted()),
      onAddresses: (message) => this.l2.heard(message),
    });
  }

  /** Caches synced and membership settled: the speaker's answers are meaningful. */
  get ready(): boolean {
    return this.synced && this.memberlist.ready;
  }

  /** The addresses this node answers for right now. */
  get ownedAddresses(): ReadonlySet<string> {
    return this.l2.addresses;
  }

  async start(): Promise<void> {
    await this.interfaces.open();
    this.cache.onChange(() => {
      this.memberlist.setPeers(nodeAddresses(this.cache.nodes.list()));
      this.scheduleRecompute();
    });
    await this.cache.start();
    this.synced = true;
    this.memberlist.setPeers(nodeAddresses(this.cache.nodes.list()));
    await this.memberlist.start();
    for (const mode of this.modes) mode.start();
    this.interfaces.watch();
    this.log.info(
      {
        node: this.config.nodeName,
        interfaces: [...this.interfaces.announcers.keys()],
        port: this.config.memberlist.port,
      },
      "speaker started",
    );
  }

  /**
   * SIGTERM. A departing speaker tells the others it leaves, so the next nodes take its addresses over at once
   * rather than after the failure-detection timeout, answers each address until its next announcer says it does
   * (make-before-break; at most the hold time), and withdraws its BGP routes. One the DaemonSet replaces on the
   * same node (kube/replacement.ts) says it restarts: the node goes on forwarding, so its L2 addresses stay for the
   * new pod (others hold them at most RESTART_HOLD_MS; moving them would cut every connection through the node,
   * twice) and so do its BGP routes (graceful peers hold them while FRR is replaced). FRR's containers stop only
   * once this is done (FrrFiles.release).
   */
  async stop(): Promise<void> {
    if (this.stopped || this.stopping) return;
    this.stopping = true;
    const inPlace = await this.replacedInPlace();
    if (inPlace) this.restarting = true;
    else this.leaving = true;
    // A departing node's modes that withdraw by themselves do so now (the recompute gives them nothing for it),
    // while the others hand over once the membership has heard of the departure.
    const withdrawing = inPlace ? [] : this.modes.filter((mode) => mode.departure === "withdraw");
    if (withdrawing.length > 0) this.recompute();
    const withdrawn = Promise.all(withdrawing.map((mode) => mode.withdrawn()));
    const handingOver = this.modes.filter((mode) => mode.departure === "handover" && mode.announcing);
    if (inPlace) {
      this.log.info(
        { reason: inPlace, addresses: this.l2.addresses.size },
        "replaced in place: its addresses wait for the new pod",
      );
      await this.memberlist.announceLeave("restarting");
    } else if (this.ready && handingOver.length > 0) {
      await this.memberlist.announceLeave();
      this.scheduleRecompute();
      await Promise.all(handingOver.map((mode) => mode.withdrawn()));
    }
    await withdrawn;
    await this.shutDown(
      inPlace ? () => Promise.resolve(this.memberlist.stop()) : () => this.memberlist.leave(),
    );
  }

  /** Why this pod is replaced on its node (undefined: its stop is a departure). Only worth asking with addresses. */
  private async replacedInPlace(): Promise<string | undefined> {
    if (!this.config.pod || !this.ready) return undefined;
    if (!this.modes.some((mode) => mode.announcing)) return undefined;
    const self = this.cache.nodes.list().find((n) => n.metadata?.name === this.config.nodeName);
    return readReplacement(this.api, this.config.pod, self);
  }

  /** Stops announcing, says goodbye to the membership (`farewell`), and closes everything. */
  private async shutDown(farewell: () => Promise<void>): Promise<void> {
    this.stopped = true;
    this.interfaces.stopRescanning();
    for (const mode of this.modes) mode.stop(this.restarting ? "restarting" : "withdrawn");
    await farewell();
    this.l2.close();
    this.interfaces.close();
    await this.cache.stop();
  }

  /**
   * One decision for a burst of changes: after the I/O callbacks of this turn of the event loop (setImmediate),
   * not after each (a microtask), so a backlog of watch events — a thousand Services created at once — is read
   * into the cache first and decided on once, instead of once per event, each over every Service.
   */
  private scheduleRecompute(): void {
    if (this.recomputePending) return;
    this.recomputePending = true;
    setImmediate(() => {
      this.recomputePending = false;
      if (!this.stopped) this.recompute();
    });
  }

  private recompute(): void {
    if (!this.ready) {
      for (const mode of this.modes) mode.notReady();
      return;
    }
    const live = this.memberlist.live();
    if (this.leaving) live.delete(this.config.nodeName);
    const view: SpeakerView = {
      self: this.config.nodeName,
      nodes: this.cache.nodes.list(),
      services: this.cache.services.list(),
      pools: this.pools.current(),
      live,
      leaving: this.leaving,
    };
    const all = announcedServices(view.services, this.cache.endpointSlices.list(), this.config, view.pools);
    // L2's claims first: what its advertisements' reading finds wrong is logged beside the pools' problems.
    const l2Claims = this.l2.claims(view.pools);
    const claims = this.bgp ? { l2: l2Claims, bgp: this.bgp.claims(view.pools) } : { l2: l2Claims };
    const shares = shareServices(all, view.pools, claims);
    for (const mode of this.modes) mode.update(view, shares[mode.name]);
  }
}
