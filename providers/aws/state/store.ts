// What Portico knows of the account between passes, in one place, with its invalidation: the recent full
// observations (recentObservations.ts), the account's load balancer and target group listings (elbIndex.ts), the
// cluster's security groups and rules (securityGroupIndex.ts over clusterGroups.ts), listeners read in batches
// (listenerBatch.ts) and the security rules each Service's last pass left in place (securityRules.ts). A pass
// reads the account through it and tells it what it writes, and it decides what that makes stale. What a Service's
// NLB is built from, read once for the cluster, is kept beside it in clusterReads.ts, one AgedReads (agedReads.ts)
// each, aged by cacheAge.ts and dropped together on a new leadership term by the resolver that holds them: subnets,
// the targets' backend groups, the VPC's CIDRs, and (kept one minute whoever asks) the security groups, prefix lists
// and certificates a Service names. The shared backend's uses (securityGroups/sharedBackend.ts) and LBC's stacks
// (lbc/takeOver.ts) are kept by their owners, which plan with them.
import type { LoadBalancerIntent, ServiceRef } from "../../provider.ts";
import { currentPriority } from "../../priority.ts";
import type { AwsClients } from "../clients.ts";
import { CLUSTER_CACHE_FOR_USERS_MS } from "./cacheAge.ts";
import { ClusterGroups, type ClusterGroupsRead } from "./clusterGroups.ts";
import { ElbIndex } from "./elbIndex.ts";
import { ListenerBatch, listenersFrom } from "./listenerBatch.ts";
import type { DesiredLoadBalancer, Observed } from "../model.ts";
import { observe, refreshTargets } from "./observe.ts";
import type { Operation, Plan } from "../plan.ts";
import { onlyTargets } from "../passSteps.ts";
import { RecentObservations } from "./recentObservations.ts";
import { SecurityGroupIndex } from "./securityGroupIndex.ts";
import { backendRuleKey, ruleDifferences, type HeldRules } from "./securityRules.ts";
import { SecurityRuleRecords } from "../../securityRuleRecords.ts";

/** A read of the cluster's groups begun this recently is the security-rule check's too (a burst's, a resync's). */
const CHECK_SHARES_READ_MS = 2_000;

/** What changes a Service's own security group or its per-Service backend rules. */
const GROUP_OPERATIONS = new Set<Operation["kind"]>([
  "createSecurityGroup",
  "authorizeIngress",
  "revokeIngress",
  "deleteSecurityGroup",
  "authorizeBackendRules",
  "revokeBackendRules",
]);

export interface AwsStateOptions {
  /** How long a full observation may stand in for target-only changes (0: observe every time). */
  observationTtlMs: number;
  /** Past that, how long it may while the account's listings still show it unchanged. */
  fullObservationPeriodMs: number;
}

export class AwsState {
  /** The cluster's security groups and rules, read for every Service at once (the shared backend reads them too). */
  readonly groupReads: ClusterGroups;
  /** The security rules each Service's last pass left in place, for the security-rule check. */
  readonly rules = new SecurityRuleRecords<HeldRules>(Date.now);
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly recent: RecentObservations;
  private readonly elbIndex: ElbIndex;
  private readonly groupIndex: SecurityGroupIndex;
  private readonly listeners: ListenerBatch;

  constructor(clients: AwsClients, cluster: string, opts: AwsStateOptions) {
    this.clients = clients;
    this.cluster = cluster;
    this.recent = new RecentObservations(opts.observationTtlMs, Date.now, opts.fullObservationPeriodMs);
    this.elbIndex = new ElbIndex(clients, cluster, opts.observationTtlMs);
    this.listeners = new ListenerBatch(clients);
    this.groupReads = new ClusterGroups(clients, cluster);
    this.groupIndex = new SecurityGroupIndex(clients, cluster, this.groupReads);
  }

  /**
   * The recent full observation for this shape with its targets read again, kept for the next pass too, or
   * undefined when there is none (or a target group vanished), so a full observation is needed.
   */
  async reuse(uid: string, desired: DesiredLoadBalancer): Promise<Observed | undefined> {
    // A pass someone waits for (an endpoint change) trusts it as long as the cluster's shared reads: it reads the
    // targets it changes, and neither waits for nor pays the account's listings; background passes confirm it.
    const user = currentPriority() === "user";
    const earlier = this.recent.get(uid, desired, user ? CLUSTER_CACHE_FOR_USERS_MS : undefined);
    if (!earlier) return undefined;
    if (earlier.confirm) {
      const at = await this.elbIndex.confirms(earlier.observed, earlier.takenAt);
      if (at === undefined) {
        this.recent.forget(uid);
        return undefined;
      }
      this.recent.confirmed(uid, at);
    }
    const refreshed = await refreshTargets(this.clients, earlier.observed);
    if (!refreshed) this.recent.forget(uid);
    return refreshed;
  }

  /** Everything of the Service's, read through the cluster-wide listings and indexes where they are current. */
  async observe(intent: LoadBalancerIntent, desired: DesiredLoadBalancer): Promise<Observed> {
    const ports = desired.listeners.filter((l) => Object.keys(l.attributes).length).map((l) => l.port);
    // A settled Service's periodic full observation: its listeners read by ARN, together with other Services'.
    const last = this.recent.lastFull(intent.service.uid, desired);
    const attached = last && (await this.elbIndex.attachedGroups());
    return observe(this.clients, this.cluster, intent.service, {
      desiredName: desired.name,
      listenerAttributePorts: ports,
      groups: this.groupIndex,
      listed: (service) => this.elbIndex.listed(service),
      ...(attached ? { listenersOf: listenersFrom(this.listeners, last, attached) } : {}),
    });
  }

  /** Everything of the Service's, read for it alone (what is deleted is decided from it). */
  observeAlone(service: ServiceRef): Promise<Observed> {
    this.recent.forget(service.uid);
    return observe(this.clients, this.cluster, service);
  }

  /** A planned observation stands for the passes that follow when its plan touches the targets alone. */
  planned(uid: string, desired: DesiredLoadBalancer, observed: Observed, p: Plan): void {
    if (onlyTargets(p)) this.recent.remember(uid, desired, observed);
    else this.recent.forget(uid);
  }

  /** What Portico just made or changed, known from its own writes: the passes that follow read targets alone. */
  remember(uid: string, desired: DesiredLoadBalancer, observed: Observed): void {
    this.recent.remember(uid, desired, observed);
  }

  /** The Service's kept observation no longer holds (a failed pass, a plan beyond targets). */
  forget(uid: string): void {
    this.recent.forget(uid);
  }

  /** Runs the pass's writes, marking what they change as stale before and after them, whether they succeed or not. */
  async writing<T>(
    uid: string,
    operations: readonly Operation[] | "all",
    work: () => Promise<T>,
  ): Promise<T> {
    const groups = operations === "all" || operations.some((op) => GROUP_OPERATIONS.has(op.kind));
    // The cluster's shared rules are no resource of the Service's: the listings of its own still hold.
    const any = operations === "all" || operations.some((op) => op.kind !== "useSharedBackend");
    const touch = () => {
      if (groups) this.groupIndex.touched(uid);
      if (any) this.elbIndex.touched(uid);
    };
    touch();
    // While Portico writes them, the Service's rules are not compared: the check would take its writes for drift.
    const written = groups ? this.rules.writing(uid) : undefined;
    try {
      return await work();
    } finally {
      touch();
      written?.();
    }
  }

  /**
   * The security-rule check: a read of the cluster's groups and rules (shared with one just begun), and the
   * Services whose own rules in it differ from those their last pass left. Their kept observations predate the
   * change, so they are dropped: the Services' next passes observe in full, and restore the rules.
   */
  async ruleDrift(): Promise<{
    read: ClusterGroupsRead;
    drifted: { service: ServiceRef; differences: string[] }[];
  }> {
    const read = await this.groupReads.read(CHECK_SHARES_READ_MS);
    const index = this.groupIndex.indexOf(read);
    const anyService = new Set([...index.rules.values()].flat().map(backendRuleKey));
    const drifted = this.rules.drifted(read.at, (held, { uid }) =>
      ruleDifferences(held, index.groups.get(uid) ?? [], index.rules.get(uid) ?? [], anyService),
    );
    for (const d of drifted) this.recent.forget(d.service.uid);
    return { read, drifted };
  }

  /** A new leadership term: everything cached or kept may be stale (another leader acted since). */
  newTerm(): void {
    this.groupReads.forget();
    this.groupIndex.forget();
    this.elbIndex.forget();
    this.recent.clear();
    this.rules.clear();
  }
}
