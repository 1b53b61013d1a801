// The L2 mode of one speaker: from the speaker's view, elects a node for each address it is given (the pure
// modules beside it: assignment, incumbents, ranking, announce rules), holds back addresses a conflict probe has not
// cleared, hands addresses over make-before-break through the membership, answers what this node won on its
// interfaces (answering.ts), and tells what it decided: Events on the Services and the ServiceL2Status records.
import type { V1Service } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { L2StatusRecord } from "../../shared/l2status.ts";
import type { InterfaceAnnouncer } from "../io/interfaceAnnouncer.ts";
import type { KubeApi } from "../kube/api/client.ts";
import type { AddressMessage } from "../membership/memberlist.ts";
import type { SpeakerMetrics } from "../metrics.ts";
import type { Mode, SpeakerView, StopReason } from "../modes/mode.ts";
import { selectsPool, type AnnouncePool } from "../pools.ts";
import { schedulableNodes, serviceKey, type AnnouncedService } from "../serviceView.ts";
import { AnnounceConfig, type AdvertisementSources } from "./announceConfig.ts";
import { AnnounceRules } from "./announceRules.ts";
import { Answering } from "./answering.ts";
import { addressesOf, assignAddresses, type AddressAssignment } from "./assignment.ts";
import { ConflictProbes } from "./conflictProbes.ts";
import type { Interfaces } from "./handover.ts";
import { Handovers } from "./handoverMessages.ts";
import { incumbentsOf, keepIncumbents } from "./incumbents.ts";
import { RankingCache } from "./ranking.ts";
import { recordFacts } from "./recordFacts.ts";
import { ServiceReports } from "./serviceReports.ts";
import { planL2Statuses } from "./statusPlan.ts";
import { L2StatusWriter } from "./statusWriter.ts";

/**
 * The longest an address moving away is still answered here, waiting for its new announcer to confirm: a
 * restarted speaker starts answering one membership timeout after it is seen alive, so several of those.
 */
const HOLD_TIMEOUTS = 4;
const MIN_HOLD_MS = 2000;

export interface L2ModeDeps {
  readonly node: string;
  readonly api: KubeApi;
  readonly log: Logger;
  readonly metrics: SpeakerMetrics;
  readonly memberlist: { readonly intervalMs: number; readonly timeoutMs: number };
  readonly gratuitous: { readonly burstOffsetsMs: readonly number[]; readonly periodicMs: number };
  /** The interfaces the speaker has open, by name. */
  readonly announcers: ReadonlyMap<string, InterfaceAnnouncer>;
  readonly advertisements: AdvertisementSources;
  /** The ServiceL2Status records in the cache; undefined while their CRD is not installed or not yet listed. */
  readonly records: () => L2StatusRecord[] | undefined;
  /** Sends a hand-over message to a node through the membership (Memberlist.tell). */
  readonly tell: (
    node: string,
    type: AddressMessage["type"],
    addresses: readonly string[],
    macs?: readonly string[],
  ) => void;
  /** Something the decision depends on moved (a probe ended, a hand-over was confirmed): decide again. */
  readonly changed: () => void;
}

export class L2Mode implements Mode {
  readonly name = "l2";
  readonly departure = "handover";
  private readonly deps: L2ModeDeps;
  private readonly ranking = new RankingCache();
  private readonly config: AnnounceConfig;
  private readonly reports: ServiceReports;
  private readonly statuses: L2StatusWriter;
  private readonly conflicts: ConflictProbes;
  private readonly handovers: Handovers;
  private readonly answering: Answering;
  /** The last election's outcome for this node, kept for planning again when a hand-over moves on. */
  private decision: { won: Map<string, Interfaces>; winners: Map<string, string | undefined> } | undefined;

  constructor(deps: L2ModeDeps) {
    this.deps = deps;
    const { node, api, log, metrics, announcers, changed } = deps;
    this.config = new AnnounceConfig(deps.advertisements, log);
    this.reports = new ServiceReports({ node, log, metrics, api });
    this.statuses = new L2StatusWriter(
      api,
      log,
      (outcome) => metrics.l2StatusWrites.inc({ outcome }),
      changed,
    );
    this.answering = new Answering({
      log,
      metrics,
      gratuitous: deps.gratuitous,
      announcers,
      gained: (addresses) => this.handovers.answered(addresses),
    });
    this.conflicts = new ConflictProbes({
      node,
      log,
      metrics,
      api,
      interfaces: () => [...announcers.values()],
      answersOn: (address, name) => this.answering.answersOn(address, name),
      changed,
      handingOver: (mac) => this.handovers.isHolderMac(mac),
    });
    this.handovers = new Handovers({
      self: node,
      intervalMs: deps.memberlist.intervalMs,
      maxHoldMs: this.maxHoldMs,
      tell: deps.tell,
      macs: () => [...announcers.values()].map((a) => a.mac),
      answering: () => this.answering.addresses,
      changed,
    });
  }

  /** The addresses this node answers for right now. */
  get addresses(): ReadonlySet<string> {
    return this.answering.addresses;
  }

  get announcing(): boolean {
    return this.answering.addresses.size > 0;
  }

  /** Election and hand-over need no loop of their own: they run on the speaker's decisions and messages. */
  start(): void {}

  /** Pools an L2Advertisement selects (the others are L2's too unless BGP claims them: modes/arbiter.ts). */
  claims(pools: readonly AnnouncePool[]): ReadonlySet<string> {
    const ads = this.config.current(pools);
    return new Set(pools.filter((pool) => ads.some((ad) => selectsPool(ad, pool))).map((p) => p.key));
  }

  notReady(): void {
    this.answering.apply(new Map());
  }

  update(view: SpeakerView, announced: readonly AnnouncedService[]): void {
    const { self, nodes, services, pools, live } = view;
    // Among the nodes whose speakers are alive, so that cordoned nodes keep announcing when no other node can.
    const alive = nodes.filter((n) => live.has(n.metadata?.name ?? ""));
    const eligible = { Cluster: schedulableNodes(alive), Local: schedulableNodes(alive, "Local") };
    this.ranking.setNodes(nodes.map((n) => n.metadata?.name ?? "").filter(Boolean));
    const rules = new AnnounceRules(pools, this.config.current(pools), nodes);
    const records = this.deps.records();
    const assignments = assignAddresses(
      announced,
      eligible,
      keepIncumbents(this.ranking.elect, incumbentsOf(records ?? [])),
      (pool, service) => rules.allowedNodes(pool, service.labels),
    );
    this.ranking.retain(new Set(assignments.keys()));
    const byKey = new Map(services.map((s) => [serviceKey(s), s] as const));
    const owned = new Map<string, readonly string[] | undefined>();
    for (const address of addressesOf(self, assignments)) {
      owned.set(address, rules.interfacesOf(assignments.get(address)!, announced, self));
    }
    this.conflicts.withhold(owned, this.answering.addresses, records, (address) =>
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

  /** Waits until other nodes answer what this node did (make-before-break), at most the hold time. */
  async withdrawn(): Promise<boolean> {
    const deadline = Date.now() + this.maxHoldMs;
    while (this.announcing && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    return !this.announcing;
  }

  /** Stops answering (either way: a restarting node's addresses are kept by the others for the new pod). */
  stop(_reason: StopReason): void {
    this.answering.apply(new Map());
  }

  /** Once the membership has said goodbye: no more hand-over questions, no more gratuitous announcements. */
  close(): void {
    this.handovers.stop();
    this.answering.stop();
  }

  /** A hand-over message from another speaker. */
  heard(message: AddressMessage): void {
    this.handovers.received(message);
  }

  /** This node refuted its own death (see Answering.refuted). */
  refuted(): void {
    this.answering.refuted();
  }

  /** A frame received on an interface (conflict probes look for answers). */
  seen(frame: Buffer): void {
    this.conflicts.seen(frame);
  }

  /** An interface just opened: give it what it answers for. */
  opened(announcer: InterfaceAnnouncer): void {
    this.answering.opened(announcer);
  }

  private get maxHoldMs(): number {
    return Math.max(MIN_HOLD_MS, HOLD_TIMEOUTS * this.deps.memberlist.timeoutMs);
  }

  /** Answers what this node won, and what it still holds for a new announcer that has not confirmed yet. */
  private settle(): void {
    if (!this.decision) return;
    const plan = this.handovers.plan(this.decision.won, this.answering.current(), this.decision.winners);
    for (const { address, reason, to } of plan.released)
      if (reason !== "unannounced") this.deps.log.info({ address, to, reason }, "address handed over");
    this.answering.apply(plan.answer);
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
    const self = this.deps.node;
    const facts = recordFacts({
      node: self,
      assignments,
      services: byKey,
      rules,
      answering: this.answering.addresses,
      interfaces: (address) => this.answering.openOn(address),
      inUse: (address) => this.conflicts.inUse(address),
    });
    this.statuses.apply(
      planL2Statuses({ node: self, ...facts, existing, live }),
      new Set(existing.map((r) => `${r.namespace}/${r.name}`)),
    );
  }
}
