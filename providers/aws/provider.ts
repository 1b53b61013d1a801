// The AWS NLB provider: it sequences one pass per Service, whose stages each read what the one before produced —
// what the Service alone refuses, resolve (the reads the desired NLB depends on), build (pure), the cluster's own
// resources (the LBC take-over, the shared backend group), observe through the state store, plan (pure), apply
// make-before-break — and answers porticoctl (plan, inspect) through the same pass in plan mode.
import type {
  EnsureResult,
  InspectNode,
  LoadBalancerIntent,
  LoadBalancerProvider,
  Notice,
  PlanDescription,
  SecurityRuleDrift,
  ServiceRef,
} from "../provider.ts";
import { defaultTargetType, parseAwsSettings, type AwsServiceSettings } from "./annotations/settings.ts";
import type { Unresolved } from "./securityGroups/backendGroups.ts";
import { SharedBackend, type SharedUse } from "./securityGroups/sharedBackend.ts";
import { withPriority } from "../priority.ts";
import { inspectService } from "./inspect.ts";
import { awsTraffic, healthyEndpoints, podDrain, statesOf } from "./traffic.ts";
import { createAwsClients, type AwsClientOptions, type AwsClients } from "./clients.ts";
import { checkIntent, checkSettings } from "./checks.ts";
import { SHARED_BACKEND_GROUP, type DesiredLoadBalancer, type Observed } from "./model.ts";
import { TAG } from "./names.ts";
import { taggedResources } from "./state/observe.ts";
import { apply } from "./apply.ts";
import { describeOperations, plan, planDeletion, type Operation, type Plan } from "./plan.ts";
import { makeBeforeBreak, onlyTargets } from "./passSteps.ts";
import { nothingWritten, observedAfter } from "./written.ts";
import { asTaken, renamed, renamesOf } from "./lbc/adoption.ts";
import { takeOverOperation } from "./lbc/operations.ts";
import { LbcTakeOver, type LbcTakeOverOptions, type TakeOverView } from "./lbc/takeOver.ts";
import { AwsResolver } from "./resolve.ts";
import { build, withSharedGroup } from "./build.ts";
import { AwsState } from "./state/store.ts";
import { heldBy } from "./state/securityRules.ts";

export { AWS_LOAD_BALANCER_CLASS } from "../classes.ts";
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
  /** The account's quota of inbound rules per security group and address family (default EC2's, 60). */
  rulesPerSecurityGroup?: number;
  /** Take over the AWS Load Balancer Controller's NLBs in place (lbc/takeOver.ts); absent: never look for them. */
  takeOverLbc?: LbcTakeOverOptions;
}

/** Where a pass got to before its writes: ensure carries the plan out, porticoctl plan describes it. */
interface Planned {
  desired: DesiredLoadBalancer;
  observed: Observed;
  plan: Plan;
  /** What the Service asks of the cluster's shared backend group (recorded as the plan is carried out). */
  shared: SharedUse | null;
}

/** What a pass found: its plan, unless the take-over was refused (plan shows why, ensure throws it). */
interface Pass {
  planned?: Planned;
  unresolved: Unresolved[];
  takeOver?: TakeOverView;
}

/**
 * The AWS provider. One pass, in stages that each read what the one before produced and never change it: settings
 * (refused before the cloud is asked anything) → resolve (every read the desired NLB depends on) → build (pure) →
 * take-over and the shared backend group (the cluster's own resources) → observe (through the state store, which
 * keeps and invalidates what it read) → plan (pure) → apply or describe. `ensure` and `plan` run the same pass;
 * only ensure writes.
 */
const NOTHING: Observed = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };

export class AwsProvider implements LoadBalancerProvider {
  readonly name = "aws";
  readonly reportsPodHealth = true;
  readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly defaultScheme: "internal" | "internet-facing";
  private readonly rulesPerSecurityGroup: number | undefined;
  private readonly resolver: AwsResolver;
  private readonly state: AwsState;
  private readonly shared: SharedBackend;
  private readonly lbc: LbcTakeOver | undefined;

  constructor(opts: AwsProviderOptions) {
    this.cluster = opts.clusterName;
    this.defaultScheme = opts.defaultScheme ?? "internal";
    this.rulesPerSecurityGroup = opts.rulesPerSecurityGroup;
    this.clients = opts.clients ?? createAwsClients(opts);
    this.resolver = new AwsResolver(this.clients, this.cluster);
    this.state = new AwsState(this.clients, this.cluster, {
      observationTtlMs: opts.observationTtlMs ?? 60_000,
      fullObservationPeriodMs: opts.fullObservationPeriodMs ?? 3_600_000,
    });
    this.shared = new SharedBackend(this.clients, this.cluster, this.state.groupReads);
    this.lbc = opts.takeOverLbc ? new LbcTakeOver(this.clients, this.cluster, opts.takeOverLbc) : undefined;
  }

  ensure(intent: LoadBalancerIntent, context: { background?: boolean } = {}): Promise<EnsureResult> {
    // Every call made for this pass, however deep, waits behind users' changes on a shared rate limit.
    return withPriority(context.background ? "background" : "user", () => this.ensureNow(intent));
  }

  private async ensureNow(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const uid = intent.service.uid;
    try {
      const pass = await this.pass(intent);
      if (!pass.planned) throw pass.takeOver!.refusal!;
      const result = await this.carryOut(intent, pass.planned);
      if (!pass.takeOver) return result;
      const taken = pass.planned.plan.operations.some((op) => op.kind === "takeOverFromLbc");
      if (taken) this.lbc!.taken(intent.service, pass.takeOver.adoption);
      return this.lbc!.after(intent.service, pass.takeOver, taken, result);
    } catch (err) {
      this.state.forget(uid);
      // What failed may have left the rules anywhere: the next pass that goes through says what they are.
      this.state.rules.forget(uid);
      throw err;
    }
  }

  async plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    const { planned, unresolved, takeOver } = await this.pass(intent);
    if (!planned) return { operations: takeOver?.lines ?? [] };
    const p = planned.plan;
    // An adoption is said by its retagging operation, first in the plan.
    const taking = p.operations.some((op) => op.kind === "takeOverFromLbc");
    return {
      operations: [
        ...(taking ? [] : (takeOver?.lines ?? [])),
        // Where there was nothing of the AWS Load Balancer Controller's to take over, what serves the Service now.
        ...(takeOver?.adoption.kind === "none" && p.current
          ? [`keep NLB ${p.current.arn} (Portico's): ${p.current.dnsName} stays`]
          : []),
        ...describeOperations(p.operations),
        // Said here so that a missing backend rule is never a mystery; ensure goes on without it.
        ...unresolved.map((u) => `no backend rule for target ${u.target}: ${u.reason}`),
      ],
    };
  }

  /**
   * The pass up to its plan, the same for ensure and porticoctl plan: nothing is written before the plan is carried
   * out. What the AWS Load Balancer Controller made is observed as it will be once retagged as Portico's (the
   * retagging is the plan's first operation), and the cluster's shared backend group by the ID it has or, until
   * the plan makes it, a stand-in (SHARED_BACKEND_GROUP).
   */
  private async pass(intent: LoadBalancerIntent): Promise<Pass> {
    const uid = intent.service.uid;
    const given = this.settingsOf(intent);
    // What can be refused from the Service alone is, before the cloud is asked anything about it.
    checkIntent(intent, given);
    const resolved = await this.resolver.resolve(intent, given);
    const unresolved = resolved.backend?.unresolved ?? [];
    const built = build(intent, resolved, this.cluster);
    const takeOver = await this.lbc?.look(intent, built.desired);
    if (takeOver?.refusal) return { unresolved, takeOver };
    const adoption = takeOver?.adoption;
    // The shared rules first: the NLB's own backend rules from before them go only once they are in place.
    const shared = await this.shared.plan(uid, built.shared);
    const wanted = withSharedGroup(
      built.desired,
      built.shared ? (shared.groupId ?? SHARED_BACKEND_GROUP) : undefined,
    );
    const retag = adoption && takeOverOperation(adoption, takeOver.lines);
    const first: Operation[] = [
      ...(retag ? [retag] : []),
      ...(shared.vpcIds.length
        ? [
            {
              kind: "useSharedBackend" as const,
              vpcIds: shared.vpcIds,
              ...(built.shared ? { vpcId: built.shared.vpcId } : {}),
              changes: shared.changes,
            },
          ]
        : []),
    ];
    const planned = (desired: DesiredLoadBalancer, observed: Observed): Pass => ({
      planned: { desired, observed, plan: plan(desired, observed, first), shared: built.shared },
      unresolved,
      ...(takeOver ? { takeOver } : {}),
    });
    if (retag) {
      // Observed under Portico's own names (LBC's NLB is not Portico's until the retagging, and found by its name
      // it would be refused), and planned under the names the adopted resources keep.
      const observed = asTaken(await this.state.observe(intent, wanted), adoption);
      const pass = planned(renamed(wanted, renamesOf(adoption)!), observed);
      this.state.planned(uid, pass.planned!.desired, observed, pass.planned!.plan);
      return pass;
    }
    const named = this.lbc?.named(uid, wanted) ?? wanted;
    const reused = await this.state.reuse(uid, named);
    if (reused) {
      const pass = planned(named, reused);
      if (onlyTargets(pass.planned!.plan)) return pass;
      // The plan depends on more than the shape the observation was kept for: observe everything.
      this.state.forget(uid);
    }
    // A Service claimed in this pass has nothing in the cloud yet (the finalizer comes first): nothing to read,
    // unless the user chose the load balancer's name (another's NLB may have it; names Portico derives include the
    // Service's UID).
    const nothingYet = intent.claimedNow && !named.nameFixed;
    const observed = nothingYet ? NOTHING : await this.state.observe(intent, named);
    const pass = planned(this.lbc?.namedAfter(intent.service, wanted, observed) ?? named, observed);
    this.state.planned(uid, pass.planned!.desired, observed, pass.planned!.plan);
    return pass;
  }

  private async carryOut(intent: LoadBalancerIntent, planned: Planned): Promise<EnsureResult> {
    const { observed, plan: p } = planned;
    const service = intent.service;
    const { operations, waitForActive } = makeBeforeBreak(p);
    const written = nothingWritten();
    this.shared.record(service.uid, planned.shared);
    const lb = await this.state.writing(service.uid, operations, () =>
      apply(operations, {
        clients: this.clients,
        observed,
        ...(p.current
          ? { current: { arn: p.current.arn, dnsName: p.current.dnsName, state: p.current.state } }
          : {}),
        securityGroupName: planned.desired.securityGroup?.name ?? "",
        cluster: this.cluster,
        service,
        written,
        shared: this.shared,
      }),
    );
    // The rules are as the pass asked: the security-rule check compares the cloud with them from now on.
    // The shared group made by this plan stands under its ID from now on, as the next pass will want it.
    const desired = written.sharedGroupId
      ? withSharedGroup(planned.desired, written.sharedGroupId)
      : planned.desired;
    this.state.rules.held(service, heldBy(desired));
    // What Portico just made or changed is known from its own writes: the passes that follow read targets alone.
    // (A plan of targets alone came from an observation already kept, whose age a write must not reset.)
    if (operations.length && !waitForActive && !onlyTargets(p)) {
      const after = observedAfter(desired, observed, p, operations, written);
      if (after) this.state.remember(service.uid, desired, after);
    }
    const notices = p.replaced.map((old): Notice => ({
      type: "Normal",
      reason: "ReplacingLoadBalancer",
      message:
        `replacing NLB ${old.name} with ${desired.name}: its scheme or name cannot change in place` +
        (waitForActive ? "; the old one stays until the new one is active" : ""),
    }));
    const pods = healthyEndpoints(desired, statesOf(observed));
    const drain = podDrain(desired);
    return {
      ingress: lb?.dnsName ? [{ hostname: lb.dnsName }] : [],
      changes: describeOperations(operations),
      notices,
      traffic: awsTraffic(intent, desired, statesOf(observed)),
      ...(pods ? { healthyEndpoints: pods } : {}),
      ...(drain ? { podDrain: drain } : {}),
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
      ...(this.rulesPerSecurityGroup ? { rulesPerSecurityGroup: this.rulesPerSecurityGroup } : {}),
    });
  }

  targetType(intent: LoadBalancerIntent): "instance" | "ip" {
    const settings = this.settingsOf(intent);
    checkSettings(intent, settings);
    return settings.targetType;
  }

  async delete(service: ServiceRef): Promise<void> {
    const observed = await this.state.observeAlone(service);
    await this.state.writing(service.uid, "all", () =>
      apply(planDeletion(observed), {
        clients: this.clients,
        observed,
        securityGroupName: "",
        cluster: this.cluster,
        service,
      }),
    );
    await this.shared.release(service.uid);
    this.state.rules.forget(service.uid);
  }

  /**
   * One read of the cluster's security groups and rules (shared with a read just begun) against what every
   * Service's last pass left: the shared backend rules are restored here, the Services whose own rules differ are
   * returned for their reconcile (which observes them in full and restores them). Nothing ensured yet: no call.
   */
  checkSecurityRules(): Promise<SecurityRuleDrift[]> {
    return withPriority("background", async () => {
      if (!this.state.rules.size) return [];
      const { read, drifted } = await this.state.ruleDrift();
      const out: SecurityRuleDrift[] = drifted.map((d) => ({ ...d, restored: false }));
      for (const [uid, differences] of await this.shared.repair(read)) {
        const service = this.state.rules.serviceOf(uid);
        if (service) out.push({ service, differences, restored: true });
      }
      return out;
    });
  }

  /** A new leadership term: everything cached or kept may be stale (another leader acted since): start afresh. */
  startTerm(): void {
    this.resolver.forget();
    this.state.newTerm();
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
    const reads = this.state.groupReads;
    const { groups, rules } = await reads.read(0, reads.mark());
    for (const g of groups) add(Object.fromEntries((g.Tags ?? []).map((t) => [t.Key!, t.Value])));
    // A crash between deleting a Service's group and its last rules must not leave the rules for good.
    for (const r of rules) add(Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value])));
    return [...found.values()];
  }
}
