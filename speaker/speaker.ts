// The speaker: joins the pieces. Kubernetes says which addresses exist, which Services have ready endpoints
// where, and which Nodes are Ready; the membership protocol says which speakers are alive; the pure
// announce decision turns both into the addresses this node owns; the interface announcers answer for
// exactly those, and takeovers are announced gratuitously.
import type { V1Service } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { AnnounceConfig } from "./l2/announceConfig.ts";
import { AnnounceRules } from "./l2/announceRules.ts";
import { addressesOf, assignAddresses, type AddressAssignment } from "./l2/assignment.ts";
import { incumbentsOf, keepIncumbents } from "./l2/incumbents.ts";
import type { SpeakerConfig } from "./config.ts";
import { loadAddon, type PacketAddon } from "./io/addon.ts";
import type { InterfaceAnnouncer } from "./io/interfaceAnnouncer.ts";
import { ipv6MulticastGroups, type MulticastGroups } from "./io/multicastGroups.ts";
import { rescanInterfaces } from "./io/interfaceScan.ts";
import { TakeoverAnnouncements } from "./io/takeover.ts";
import type { KubeApi } from "./kube/api/client.ts";
import { readReplacement } from "./kube/replacement.ts";
import { KubeCache } from "./kube/cache.ts";
import { L2StatusWriter } from "./kube/l2statusWriter.ts";
import { planL2Statuses } from "./l2/statusPlan.ts";
import { recordFacts } from "./l2/recordFacts.ts";
import { ConflictProbes } from "./l2/conflictProbes.ts";
import type { L2StatusRecord } from "../shared/l2status.ts";
import type { Interfaces } from "./l2/handover.ts";
import { Handovers } from "./membership/handover.ts";
import { Memberlist } from "./membership/memberlist.ts";
import { RankingCache } from "./l2/ranking.ts";
import { ServiceReports } from "./l2/serviceReports.ts";
import { announcedServices, nodeAddresses, schedulableNodes, serviceKey } from "./serviceView.ts";
import type { SpeakerMetrics } from "./metrics.ts";
import { BgpAnnouncer } from "./bgp/announcer.ts";
import { l2Services } from "./bgp/modes.ts";

const STATS_INTERVAL_MS = 5000;
/**
 * The longest an address moving away is still answered here, waiting for its new announcer to confirm: a
 * restarted speaker starts answering one membership timeout after it is seen alive, so several of those.
 */
const HOLD_TIMEOUTS = 4;
const MIN_HOLD_MS = 2000;
/** How long a stopping speaker waits for FRR to withdraw its routes before it exits anyway. */
const BGP_WITHDRAW_MS = 5000;

export class Speaker {
  private readonly config: SpeakerConfig;
  private readonly api: KubeApi;
  private readonly log: Logger;
  private readonly metrics: SpeakerMetrics;
  private readonly addon: PacketAddon;
  private readonly cache: KubeCache;
  private readonly memberlist: Memberlist;
  private readonly ranking = new RankingCache();
  private readonly announcers = new Map<string, InterfaceAnnouncer>();
  private readonly takeover: TakeoverAnnouncements;
  private ipv6Groups: MulticastGroups | undefined;
  private owned: ReadonlySet<string> = new Set();
  /** The interfaces each owned address is answered on; absent: every interface (L2Advertisement interfaces). */
  private ownedOn: ReadonlyMap<string, readonly string[]> = new Map();
  private readonly reports: ServiceReports;
  private readonly announceConfig: AnnounceConfig;
  private readonly l2Statuses: L2StatusWriter;
  private readonly conflicts: ConflictProbes;
  private readonly handovers: Handovers;
  /** The BGP mode, when the speaker runs with FRR beside it. */
  private readonly bgp: BgpAnnouncer | undefined;
  /** The last election's outcome for this node, kept for planning again when a hand-over moves on. */
  private decision: { won: Map<string, Interfaces>; winners: Map<string, string | undefined> } | undefined;
  /** SIGTERM received: this node is no longer a candidate, and waits for its addresses to be taken over. */
  private leaving = false;
  private recomputePending = false;
  /** stop() was called (it reads the API before it decides how to stop). */
  private stopping = false;
  /** SIGTERM in a rolling update: the L2 addresses and BGP routes stay here for the new pod. */
  private restarting = false;
  private synced = false;
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];

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
    this.addon = addon;
    this.cache = new KubeCache(api, log, {
      ...(config.namespace ? { namespace: config.namespace } : {}),
      ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
      ...(config.metallb.mode === "off"
        ? {}
        : { metallbNamespace: config.metallb.namespace, metallbRequired: config.metallb.mode === "on" }),
      ...(config.bgp ? { bgp: true } : {}),
    });
    this.announceConfig = new AnnounceConfig(this.cache, log);
    if (config.bgp) {
      this.bgp = new BgpAnnouncer({
        node: config.nodeName,
        ...config.bgp,
        api,
        log,
        metrics,
        objects: () => this.cache.bgpObjects(),
        recordsInstalled: () => this.cache.bgpRecordsInstalled(),
        changed: () => this.scheduleRecompute(),
      });
    }
    this.reports = new ServiceReports({ node: config.nodeName, log, metrics, api });
    this.l2Statuses = new L2StatusWriter(
      api,
      log,
      (outcome) => this.metrics.l2StatusWrites.inc({ outcome }),
      () => this.scheduleRecompute(),
    );
    this.conflicts = new ConflictProbes({
      node: config.nodeName,
      log,
      metrics,
      api,
      interfaces: () => [...this.announcers.values()],
      answersOn: (address, name) => this.answersOn(address, name),
      changed: () => this.scheduleRecompute(),
      handingOver: (mac) => this.handovers.isHolderMac(mac),
    });
    this.memberlist = new Memberlist({
      self: config.nodeName,
      ...config.memberlist,
      onLiveChange: (live) => {
        this.metrics.liveMembers.set(live.size);
        this.log.info({ live: [...live] }, "live speakers changed");
        this.scheduleRecompute();
      },
      onEvent: (event) => {
        if (event.kind === "sent" || event.kind === "received") {
          this.metrics.membershipMessages.inc({ direction: event.kind, type: event.type });
        } else {
          this.metrics.membershipEvents.inc({
            event: event.kind === "dropped" ? `dropped-${event.reason}` : event.kind,
          });
          if (event.kind === "declared-dead") this.log.info({ member: event.node }, "speaker declared dead");
          if (event.kind === "refuted") {
            // Others thought this node gone and may have moved its addresses (and the neighbours' caches)
            // elsewhere; once they hear the refutation the addresses come back here, so announce them anew.
            this.log.info({ incarnation: event.incarnation }, "refuted own death");
            this.takeover.restart(this.owned);
          }
        }
      },
      onAddresses: (message) => this.handovers.received(message),
    });
    this.handovers = new Handovers({
      self: config.nodeName,
      intervalMs: config.memberlist.intervalMs,
      maxHoldMs: this.maxHoldMs,
      tell: (node, type, addresses, macs) => this.memberlist.tell(node, type, addresses, macs),
      macs: () => [...this.announcers.values()].map((a) => a.mac),
      answering: () => this.owned,
      changed: () => this.scheduleRecompute(),
    });
    this.takeover = new TakeoverAnnouncements(
      config.gratuitous,
      (address) => [...this.announcers.values()].filter((a) => this.answersOn(address, a.name)),
      (target, protocol, frames) => this.metrics.gratuitous.inc({ interface: target.name, protocol }, frames),
    );
  }

  /** Caches synced and membership settled: the speaker's answers are meaningful. */
  get ready(): boolean {
    return this.synced && this.memberlist.ready;
  }

  /** The addresses this node answers for right now. */
  get ownedAddresses(): ReadonlySet<string> {
    return this.owned;
  }

  async start(): Promise<void> {
    this.ipv6Groups = await ipv6MulticastGroups((err) =>
      this.log.warn({ err: err.message }, "IPv6 multicast group membership failed"),
    );
    this.rescanInterfaces();
    this.cache.onChange(() => {
      this.memberlist.setPeers(nodeAddresses(this.cache.nodes.list()));
      this.scheduleRecompute();
    });
    await this.cache.start();
    this.synced = true;
    this.memberlist.setPeers(nodeAddresses(this.cache.nodes.list()));
    await this.memberlist.start();
    this.bgp?.start();
    this.timers.push(
      setInterval(() => this.rescanInterfaces(), this.config.interfaceRescanMs),
      setInterval(() => this.announcers.forEach((a) => a.collectStats()), STATS_INTERVAL_MS),
    );
    this.log.info(
      {
        node: this.config.nodeName,
        interfaces: [...this.announcers.keys()],
        port: this.config.memberlist.port,
      },
      "speaker started",
    );
  }

  private get maxHoldMs(): number {
    return Math.max(MIN_HOLD_MS, HOLD_TIMEOUTS * this.config.memberlist.timeoutMs);
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
    // A departing node withdraws every route now (the recompute renders none for it), while L2 hands over.
    let withdrawn: Promise<boolean> | undefined;
    if (this.bgp && !inPlace) {
      this.recompute();
      withdrawn = this.bgp.applied(BGP_WITHDRAW_MS);
    }
    if (inPlace) {
      this.log.info(
        { reason: inPlace, addresses: this.owned.size },
        "replaced in place: its addresses wait for the new pod",
      );
      await this.memberlist.announceLeave("restarting");
    } else if (this.ready && this.owned.size > 0) {
      await this.memberlist.announceLeave();
      const deadline = Date.now() + this.maxHoldMs;
      this.scheduleRecompute();
      while (this.owned.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    }
    if (withdrawn && !(await withdrawn))
      this.log.warn("FRR did not confirm the withdrawal in time; stopping anyway");
    await this.shutDown(
      inPlace ? () => Promise.resolve(this.memberlist.stop()) : () => this.memberlist.leave(),
    );
  }

  /** Why this pod is replaced on its node (undefined: its stop is a departure). Only worth asking with addresses. */
  private async replacedInPlace(): Promise<string | undefined> {
    if (!this.config.pod || !this.ready) return undefined;
    if (this.owned.size === 0 && !this.bgp?.advertising) return undefined;
    const self = this.cache.nodes.list().find((n) => n.metadata?.name === this.config.nodeName);
    return readReplacement(this.api, this.config.pod, self);
  }

  /** Stops answering, says goodbye to the membership (`farewell`), and closes everything. */
  private async shutDown(farewell: () => Promise<void>): Promise<void> {
    this.bgp?.stop(this.restarting ? "restarting" : "withdrawn");
    this.stopped = true;
    this.apply(new Map());
    await farewell();
    this.handovers.stop();
    for (const timer of this.timers) clearInterval(timer);
    this.takeover.stop();
    for (const announcer of this.announcers.values()) announcer.close();
    this.announcers.clear();
    this.ipv6Groups?.close();
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
    if (!this.ready) return this.apply(new Map());
    const nodes = this.cache.nodes.list();
    const services = this.cache.services.list();
    const live = this.memberlist.live();
    if (this.leaving) live.delete(this.config.nodeName);
    // Among the nodes whose speakers are alive, so that cordoned nodes keep announcing when no other node can.
    const self = this.config.nodeName;
    const alive = nodes.filter((n) => live.has(n.metadata?.name ?? ""));
    const eligible = { Cluster: schedulableNodes(alive), Local: schedulableNodes(alive, "Local") };
    this.ranking.setNodes(nodes.map((n) => n.metadata?.name ?? "").filter(Boolean));
    const { pools, ads } = this.announceConfig.current();
    const rules = new AnnounceRules(pools, ads, nodes);
    const all = announcedServices(services, this.cache.endpointSlices.list(), this.config, pools);
    if (this.bgp) {
      const own = nodes.find((n) => n.metadata?.name === self);
      const withSelf = nodes.filter((n) => n === own || live.has(n.metadata?.name ?? ""));
      this.bgp.update({
        nodeLabels: own?.metadata?.labels ?? {},
        uids: new Map(services.map((s) => [serviceKey(s), s.metadata?.uid ?? ""] as const)),
        live,
        eligible: !this.leaving && schedulableNodes(withSelf).has(self),
        eligibleForLocal: !this.leaving && schedulableNodes(withSelf, "Local").has(self),
        services: all,
        pools,
      });
    }
    const announced = this.bgp ? l2Services(all, pools, ads, this.bgp.selectedPools) : all;
    const records = this.cache.l2StatusesInstalled() ? this.cache.l2Statuses() : undefined;
    const assignments = assignAddresses(
      announced,
      eligible,
      keepIncumbents(this.ranking.elect, incumbentsOf(records ?? [])),
      (pool, service) => rules.allowedNodes(pool, service.labels),
    );
    this.ranking.retain(new Set(assignments.keys()));
    const byKey = new Map(services.map((s) => [serviceKey(s), s] as const));
    const owned = new Map<string, readonly string[] | undefined>();
    for (const address of addressesOf(this.config.nodeName, assignments)) {
      owned.set(address, rules.interfacesOf(assignments.get(address)!, announced, this.config.nodeName));
    }
    this.conflicts.withhold(owned, this.owned, records, (address) =>
      (assignments.get(address)?.services ?? []).flatMap((key) => byKey.get(key) ?? []),
    );
    const winners = new Map([...assignments].map(([address, a]) => [address, a.announcer] as const));
    this.decision = { won: owned, winners };
    this.settle();
    this.reports.assigned(assignments, byKey);
    this.reports.unmatched(assignments, byKey, rules);
    this.reports.guessedPools(announced);
    this.writeRecords(assignments, byKey, rules, live, records);
  }

  /** Answers what this node won, and what it still holds for a new announcer that has not confirmed yet. */
  private settle(): void {
    if (!this.decision) return;
    const answering = new Map<string, Interfaces>([...this.owned].map((a) => [a, this.ownedOn.get(a)]));
    const plan = this.handovers.plan(this.decision.won, answering, this.decision.winners);
    for (const { address, reason, to } of plan.released)
      if (reason !== "unannounced") this.log.info({ address, to, reason }, "address handed over");
    this.apply(plan.answer);
  }

  /** The ServiceL2Status records: where this node announces, and why addresses it reports are not announced. */
  private writeRecords(
    assignments: ReadonlyMap<string, AddressAssignment>,
    byKey: ReadonlyMap<string, V1Service>,
    rules: AnnounceRules,
    live: ReadonlySet<string>,
    existing: L2StatusRecord[] | undefined,
  ): void {
    if (!existing) return;
    const self = this.config.nodeName;
    const facts = recordFacts({
      node: self,
      assignments,
      services: byKey,
      rules,
      answering: this.owned,
      interfaces: (address) => this.openOn(address),
      inUse: (address) => this.conflicts.inUse(address),
    });
    this.l2Statuses.apply(
      planL2Statuses({ node: self, ...facts, existing, live }),
      new Set(existing.map((r) => `${r.namespace}/${r.name}`)),
    );
  }

  /** The interfaces this node answers `address` on now: the ones it opened that its advertisements allow. */
  private openOn(address: string): string[] {
    return [...this.announcers.keys()].filter((name) => this.answersOn(address, name)).sort();
  }

  /** Whether this node answers for `address` on interface `name`. */
  private answersOn(address: string, name: string): boolean {
    const only = this.ownedOn.get(address);
    return only === undefined || only.includes(name);
  }

  /** The owned addresses answered on interface `name`. */
  private ownedOnInterface(name: string): ReadonlySet<string> {
    if (this.ownedOn.size === 0) return this.owned;
    return new Set([...this.owned].filter((address) => this.answersOn(address, name)));
  }

  private apply(owned: ReadonlyMap<string, readonly string[] | undefined>): void {
    const on = new Map<string, readonly string[]>();
    for (const [address, names] of owned) if (names !== undefined) on.set(address, names);
    const where = (map: ReadonlyMap<string, readonly string[]>) =>
      [...map].map(([address, names]) => `${address}:${names.join("+")}`).join(",");
    const changed =
      owned.size !== this.owned.size ||
      [...owned.keys()].some((a) => !this.owned.has(a)) ||
      where(on) !== where(this.ownedOn);
    this.metrics.elections.inc({ outcome: changed ? "changed" : "unchanged" });
    if (!changed) return;
    const addresses = new Set(owned.keys());
    const gained = [...addresses].filter((a) => !this.owned.has(a));
    const lost = [...this.owned].filter((a) => !addresses.has(a));
    this.owned = addresses;
    this.ownedOn = on;
    for (const announcer of this.announcers.values())
      announcer.setOwned(this.ownedOnInterface(announcer.name));
    // Only once answered here: whoever holds these for this node stops answering on this word.
    if (gained.length > 0) this.handovers.answered(gained);
    this.takeover.update(addresses);
    this.metrics.announced.set(addresses.size);
    this.log.info(
      { gained, lost, owned: [...addresses], ...(on.size > 0 ? { interfaces: Object.fromEntries(on) } : {}) },
      "announced addresses changed",
    );
    for (const [address, names] of on) {
      if (!names.some((name) => this.announcers.has(name))) {
        this.log.warn(
          { address, interfaces: names, open: [...this.announcers.keys()] },
          "no interface its L2Advertisements name is one this speaker announces on (missing, or excluded by --exclude-interfaces); the address is not answered",
        );
      }
    }
  }

  /** Opens interfaces that appeared (or came up) and closes those that vanished or changed address. */
  private rescanInterfaces(): void {
    if (this.stopped) return;
    rescanInterfaces(this.announcers, {
      addon: this.addon,
      config: this.config,
      ipv6Groups: this.ipv6Groups,
      metrics: this.metrics,
      log: this.log,
      frame: (frame) => this.conflicts.seen(frame),
      opened: (announcer) => {
        const owned = this.ownedOnInterface(announcer.name);
        announcer.setOwned(owned);
        this.takeover.announceOn(announcer, owned);
      },
      changed: () => this.scheduleRecompute(),
    });
  }
}
