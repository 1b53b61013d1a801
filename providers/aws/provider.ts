// The AWS NLB provider: intent → desired NLB (pure) → observe by tags → plan (pure) → apply.
import type {
  EnsureResult,
  InspectNode,
  LoadBalancerIntent,
  LoadBalancerProvider,
  Notice,
  PlanDescription,
  ServiceRef,
} from "../provider.ts";
import { defaultTargetType, parseAwsSettings, type AwsServiceSettings } from "./annotations.ts";
import { BackendGroupResolver, type Unresolved } from "./backendGroups.ts";
import { ClusterGroups } from "./clusterGroups.ts";
import { backendNeeds, cidrBackendRules } from "./backendRules.ts";
import { SharedBackend, type SharedUse } from "./sharedBackend.ts";
import { SecurityGroupIndex } from "./securityGroupIndex.ts";
import { ElbIndex } from "./elbIndex.ts";
import { ListenerBatch, listenersFrom } from "./listenerBatch.ts";
import { currentPriority, withPriority } from "../priority.ts";
import { UserSecurityGroups } from "./userSecurityGroups.ts";
import { CertificateChecker } from "./certificates.ts";
import { inspectService } from "./inspect.ts";
import { awsTraffic, statesOf } from "./traffic.ts";
import { createAwsClients, type AwsClientOptions, type AwsClients } from "./clients.ts";
import { checkSettings, desiredLoadBalancer, type Network } from "./desired.ts";
import type { DesiredLoadBalancer, Observed } from "./model.ts";
import { TAG } from "./names.ts";
import { observe, refreshTargets, taggedResources } from "./observe.ts";
import { apply } from "./apply.ts";
import { describeOperation, plan, planDeletion, type Operation, type Plan } from "./plan.ts";
import { makeBeforeBreak, onlyTargets } from "./passSteps.ts";
import { SubnetResolver } from "./network.ts";
import { RecentObservations } from "./recentObservations.ts";
import { CLUSTER_CACHE_FOR_USERS_MS } from "./cacheAge.ts";
import { nothingWritten, observedAfter } from "./written.ts";
import { asTaken, renamed, renamesOf } from "./lbcAdoption.ts";
import { LbcTakeOver, type LbcTakeOverOptions, type TakeOverView } from "./lbcTakeOver.ts";

export { AWS_LOAD_BALANCER_CLASS } from "../classes.ts";
/** What changes a Service's own security group or its per-Service backend rules. */
const GROUP_OPERATIONS = new Set<Operation["kind"]>([
  "createSecurityGroup",
  "authorizeIngress",
  "revokeIngress",
  "deleteSecurityGroup",
  "authorizeBackendRules",
  "revokeBackendRules",
]);
/** Stands for the shared backend group in a dry run, before it is made. */
const SHARED_GROUP_TO_BE_MADE = "(the shared backend group)";
/** How soon to look again while a replacement waits for its new load balancer to become active. */
const REPLACEMENT_POLL_MS = 10_000;

export interface AwsProviderOptions extends AwsClientOptions {
  /** Names the cluster in ownership tags and subnet discovery (`kubernetes.io/cluster/<name>`). */
  clusterName: string;
  /** Scheme when a Service does not say; internal, as users of the AWS Load Balancer Controller expect. */
  defaultScheme?: "internal" | "internet-facing";
  /** How long a full observation may stand in for target-only changes (default 60 s; 0: observe every time). */
  observationTtlMs?: number;
  /**
   * Past that, how long it may while the account's load balancer and target group listings still show it
   * unchanged (default 1 h): the longest drift in listeners or attributes can go unseen.
   */
  fullObservationPeriodMs?: number;
  clients?: AwsClients;
  /** Take over the AWS Load Balancer Controller's NLBs in place (lbcTakeOver.ts); absent: never look for them. */
  takeOverLbc?: LbcTakeOverOptions;
}

export class AwsProvider implements LoadBalancerProvider {
  readonly name = "aws";
  readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly defaultScheme: "internal" | "internet-facing";
  private readonly subnets: SubnetResolver;
  private readonly certificates: CertificateChecker;
  private readonly recent: RecentObservations;
  private readonly backendGroups: BackendGroupResolver;
  private readonly userGroups: UserSecurityGroups;
  private readonly shared: SharedBackend;
  private readonly groupIndex: SecurityGroupIndex;
  private readonly groupReads: ClusterGroups;
  private readonly elbIndex: ElbIndex;
  private readonly listeners: ListenerBatch;
  private readonly lbc: LbcTakeOver | undefined;

  constructor(opts: AwsProviderOptions) {
    this.cluster = opts.clusterName;
    this.defaultScheme = opts.defaultScheme ?? "internal";
    this.clients = opts.clients ?? createAwsClients(opts);
    this.subnets = new SubnetResolver(this.clients, this.cluster);
    this.certificates = new CertificateChecker(this.clients.acm);
    this.recent = new RecentObservations(
      opts.observationTtlMs ?? 60_000,
      Date.now,
      opts.fullObservationPeriodMs ?? 3_600_000,
    );
    this.elbIndex = new ElbIndex(this.clients, this.cluster, opts.observationTtlMs ?? 60_000);
    this.listeners = new ListenerBatch(this.clients);
    this.backendGroups = new BackendGroupResolver(this.clients, this.cluster);
    this.userGroups = new UserSecurityGroups(this.clients);
    this.groupReads = new ClusterGroups(this.clients, this.cluster);
    this.shared = new SharedBackend(this.clients, this.cluster, this.groupReads);
    this.groupIndex = new SecurityGroupIndex(this.clients, this.cluster, this.groupReads);
    this.lbc = opts.takeOverLbc ? new LbcTakeOver(this.clients, this.cluster, opts.takeOverLbc) : undefined;
  }

  ensure(intent: LoadBalancerIntent, context: { background?: boolean } = {}): Promise<EnsureResult> {
    // Every call made for this pass, however deep, waits behind users' changes on a shared rate limit.
    return withPriority(context.background ? "background" : "user", () => this.ensureNow(intent));
  }

  private async ensureNow(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const uid = intent.service.uid;
    try {
      const { desired: wanted, shared } = await this.desire(intent);
      // Taking over: what the AWS Load Balancer Controller made is retagged first, then planned as Portico's own.
      const takeOver = await this.lbc?.look(intent, wanted);
      if (takeOver?.refusal) throw takeOver.refusal;
      const taken = takeOver ? await this.lbc!.take(intent.service, takeOver.adoption) : [];
      if (taken.length) {
        this.recent.forget(uid);
        this.elbIndex.touched(uid);
      }
      const told = async (pass: Promise<EnsureResult>) => {
        const result = await pass;
        return takeOver ? this.lbc!.after(intent.service, takeOver, taken, result) : result;
      };
      let desired = this.lbc?.named(uid, wanted) ?? wanted;
      // The shared rules first: the NLB's own backend rules from before them go only once they are in place.
      const { groupId, changes } = await this.shared.use(uid, shared);
      if (groupId) desired.sharedBackendGroup = groupId;
      const reused = await this.reuse(uid, desired);
      if (reused) {
        const p = plan(desired, reused);
        if (onlyTargets(p)) return await told(this.carryOut(intent, desired, reused, p, changes));
        // The plan depends on more than the shape the observation was kept for: observe everything.
        this.recent.forget(uid);
      }
      const observed = await this.observe(intent, desired);
      desired = this.lbc?.namedAfter(intent.service, wanted, observed) ?? desired;
      if (groupId) desired.sharedBackendGroup = groupId;
      const p = plan(desired, observed);
      if (onlyTargets(p)) this.recent.remember(uid, desired, observed);
      else this.recent.forget(uid);
      return await told(this.carryOut(intent, desired, observed, p, changes));
    } catch (err) {
      this.recent.forget(uid);
      throw err;
    }
  }

  /**
   * The recent full observation for this shape with its targets read again, kept for the next reconcile too,
   * or undefined when there is none (or a target group vanished), so a full observation is needed.
   */
  private async reuse(uid: string, desired: DesiredLoadBalancer): Promise<Observed | undefined> {
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

  private async carryOut(
    intent: LoadBalancerIntent,
    desired: DesiredLoadBalancer,
    observed: Observed,
    p: Plan,
    sharedChanges: string[],
  ): Promise<EnsureResult> {
    const service = intent.service;
    const { operations, waitForActive } = makeBeforeBreak(p);
    const touchesGroups = operations.some((op) => GROUP_OPERATIONS.has(op.kind));
    if (touchesGroups) this.groupIndex.touched(service.uid);
    if (operations.length) this.elbIndex.touched(service.uid);
    const written = nothingWritten();
    const lb = await apply(operations, {
      clients: this.clients,
      observed,
      ...(p.current
        ? { current: { arn: p.current.arn, dnsName: p.current.dnsName, state: p.current.state } }
        : {}),
      securityGroupName: desired.securityGroup?.name ?? "",
      cluster: this.cluster,
      service,
      written,
    }).finally(() => {
      if (touchesGroups) this.groupIndex.touched(service.uid);
      if (operations.length) this.elbIndex.touched(service.uid);
    });
    // What Portico just made or changed is known from its own writes: the passes that follow read targets alone.
    // (A plan of targets alone came from an observation already kept, whose age a write must not reset.)
    if (operations.length && !waitForActive && !onlyTargets(p)) {
      const after = observedAfter(desired, observed, p, operations, written);
      if (after) this.recent.remember(service.uid, desired, after);
    }
    const notices = p.replaced.map((old): Notice => ({
      type: "Normal",
      reason: "ReplacingLoadBalancer",
      message:
        `replacing NLB ${old.name} with ${desired.name}: its scheme or name cannot change in place` +
        (waitForActive ? "; the old one stays until the new one is active" : ""),
    }));
    return {
      ingress: lb?.dnsName ? [{ hostname: lb.dnsName }] : [],
      changes: [...sharedChanges, ...operations.map(describeOperation)],
      notices,
      traffic: awsTraffic(intent, desired, statesOf(observed)),
      ...(waitForActive ? { requeueAfterMs: REPLACEMENT_POLL_MS } : {}),
    };
  }

  /**
   * The Service's settings. A Service that allocates no node ports and names no target type gets ip targets, as
   * on Azure: instance targets cannot reach it (only a target type named by annotation is refused).
   */
  private settingsOf(intent: LoadBalancerIntent): AwsServiceSettings {
    return parseAwsSettings(intent.annotations, {
      scheme: this.defaultScheme,
      targetType: defaultTargetType(intent.allocateNodePorts),
    });
  }

  targetType(intent: LoadBalancerIntent): "instance" | "ip" {
    const settings = this.settingsOf(intent);
    checkSettings(intent, settings);
    return settings.targetType;
  }

  async plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    const { plan: p, unresolved, shared, takeOver } = await this.prepare(intent);
    if (!p) return { operations: takeOver?.lines ?? [] };
    return {
      operations: [
        ...(takeOver?.lines ?? []),
        // Where there was nothing of the AWS Load Balancer Controller's to take over, what serves the Service now.
        ...(takeOver?.adoption.kind === "none" && p.current
          ? [`keep NLB ${p.current.arn} (Portico's): ${p.current.dnsName} stays`]
          : []),
        ...shared,
        ...p.operations.map(describeOperation),
        // Said here so that a missing backend rule is never a mystery; ensure goes on without it.
        ...unresolved.map((u) => `no backend rule for target ${u.target}: ${u.reason}`),
      ],
    };
  }

  async delete(service: ServiceRef): Promise<void> {
    this.recent.forget(service.uid);
    const observed = await observe(this.clients, this.cluster, service);
    this.groupIndex.touched(service.uid);
    this.elbIndex.touched(service.uid);
    await apply(planDeletion(observed), {
      clients: this.clients,
      observed,
      securityGroupName: "",
      cluster: this.cluster,
      service,
    }).finally(() => {
      this.groupIndex.touched(service.uid);
      this.elbIndex.touched(service.uid);
    });
    await this.shared.release(service.uid);
  }

  /** A new leadership term: everything cached or kept may be stale (another leader acted since): start afresh. */
  startTerm(): void {
    this.subnets.forget();
    this.backendGroups.forget();
    this.groupReads.forget();
    this.groupIndex.forget();
    this.elbIndex.forget();
    this.recent.clear();
    void this.shared.forget();
  }

  /** Shared backend rules narrow to what the Services in view need, and an unused shared group goes. */
  async settle(inView: ServiceRef[], owningNow?: ServiceRef[]): Promise<void> {
    const owning = new Set((owningNow ?? (await this.ownedServices())).map((s) => s.uid));
    await this.shared.settle(
      inView.map((s) => s.uid),
      owning,
    );
  }

  inspect(service: ServiceRef): Promise<InspectNode[]> {
    return inspectService(this.clients, service);
  }

  async ownedServices(): Promise<ServiceRef[]> {
    const found = new Map<string, ServiceRef>();
    const add = (tags: Record<string, string | undefined>) => {
      const uid = tags[TAG.serviceUid];
      const [namespace, name] = (tags[TAG.service] ?? "/").split("/");
      if (uid && namespace && name) found.set(uid, { namespace, name, uid });
    };
    for (const r of await taggedResources(this.clients, [{ Key: TAG.cluster, Values: [this.cluster] }])) {
      add(Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value])));
    }
    // Read afresh (what is deleted is decided from it), and left for the passes that follow to share.
    const { groups, rules } = await this.groupReads.read(0, this.groupReads.mark());
    for (const g of groups) add(Object.fromEntries((g.Tags ?? []).map((t) => [t.Key!, t.Value])));
    // A crash between deleting a Service's group and its last rules must not leave the rules for good.
    for (const r of rules) add(Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value])));
    return [...found.values()];
  }

  private async desire(
    intent: LoadBalancerIntent,
  ): Promise<{ desired: DesiredLoadBalancer; unresolved: Unresolved[]; shared: SharedUse | null }> {
    const settings = this.settingsOf(intent);
    // Settings that cannot work together are refused before the cloud is asked anything about them.
    checkSettings(intent, settings);
    const network: Network = await this.subnets.resolve(settings.scheme, settings.subnets);
    if (settings.securityGroups.length)
      settings.securityGroups = await this.userGroups.resolve(settings.securityGroups, network.vpcId);
    const desired = desiredLoadBalancer(intent, settings, network, this.cluster);
    await this.certificates.check(settings.certificateArns);
    // As the AWS Load Balancer Controller: on by default with Portico's own group, off with the user's.
    const manage = settings.manageBackendRules ?? !settings.securityGroups.length;
    if (!manage) return { desired, unresolved: [], shared: null };
    const targetIds = desired.targetGroups.flatMap((tg) => tg.targets.map((t) => t.id));
    const { groups, unresolved } = await this.backendGroups.resolve(
      settings.targetType,
      targetIds,
      network.vpcId,
    );
    if (settings.disableNlbSg) {
      // No group to name: the rules name the NLB's subnets and the clients' addresses instead.
      const needsVpc = settings.scheme === "internal" && !intent.sourceRanges.length;
      desired.backendRules = cidrBackendRules(desired.targetGroups, groups, {
        scheme: settings.scheme,
        subnetCidrs: subnetCidrs(network, desired.subnets),
        vpcCidrs: needsVpc ? await this.backendGroups.vpcCidrs(network.vpcId) : { ipv4: [], ipv6: [] },
        sourceRanges: intent.sourceRanges,
      });
      return { desired, unresolved, shared: null };
    }
    return {
      desired,
      unresolved,
      shared: { vpcId: network.vpcId, needs: backendNeeds(desired.targetGroups, groups) },
    };
  }

  private async observe(intent: LoadBalancerIntent, desired: DesiredLoadBalancer): Promise<Observed> {
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

  /**
   * Ensure's reads and plan, without its writes. Taking over, what LBC made is planned as if already retagged as
   * Portico's, as the real pass would find it; a refused take-over plans nothing.
   */
  private async prepare(intent: LoadBalancerIntent): Promise<{
    plan?: Plan;
    unresolved: Unresolved[];
    shared: string[];
    takeOver?: TakeOverView;
  }> {
    const { desired: wanted, unresolved, shared } = await this.desire(intent);
    const takeOver = await this.lbc?.look(intent, wanted);
    if (takeOver?.refusal) return { unresolved, shared: [], takeOver };
    const preview = await this.shared.preview(intent.service.uid, shared);
    if (shared)
      wanted.sharedBackendGroup = (await this.shared.groupOf(shared.vpcId)) ?? SHARED_GROUP_TO_BE_MADE;
    if (takeOver?.adoption.kind === "adopt") {
      // Observed under Portico's own names: LBC's NLB is not Portico's yet, and found by its name it would be refused.
      const observed = asTaken(await this.observe(intent, wanted), takeOver.adoption);
      const desired = renamed(wanted, renamesOf(takeOver.adoption)!);
      return { plan: plan(desired, observed), unresolved, shared: preview, takeOver };
    }
    let desired = this.lbc?.named(intent.service.uid, wanted) ?? wanted;
    const observed = await this.observe(intent, desired);
    desired = this.lbc?.namedAfter(intent.service, wanted, observed) ?? desired;
    return {
      plan: plan(desired, observed),
      unresolved,
      shared: preview,
      takeOver,
    };
  }
}

function subnetCidrs(network: Network, subnets: string[]): { ipv4: string[]; ipv6: string[] } {
  return {
    ipv4: subnets.flatMap((s) => network.cidrs?.[s]?.ipv4 ?? []),
    ipv6: subnets.flatMap((s) => network.cidrs?.[s]?.ipv6 ?? []),
  };
}
