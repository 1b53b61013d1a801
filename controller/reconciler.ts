// Reconciles one Service: level-triggered and idempotent. It reads the Service, Nodes and EndpointSlices from
// the shared cache, lets the provider make the cloud match the intent, and reports the outcome in the
// Service's status, a condition and Events. Run again at any time, it changes nothing that is already right.
import type { CoreV1Api, V1Service } from "@kubernetes/client-node";
import { CloudError, ConfigurationError } from "../providers/errors.ts";
import type { LoadBalancerProvider, ServiceRef, TrafficState } from "../providers/provider.ts";
import type { ClusterCache } from "./runtime/cache.ts";
import {
  FINALIZER,
  hasFinalizer,
  MANAGED_BY_ANNOTATION,
  classServedUnder,
  tookOn,
  wantsLoadBalancer,
  type ClassConfig,
} from "../providers/classes.ts";
import type { EventSink } from "../shared/events.ts";
import { buildIntent, type IntentConfig } from "./intent.ts";
import type { Logger } from "../shared/log.ts";
import { mergePatch, strategicMergePatch } from "../shared/patch.ts";
import { releasePatch, SERVING_CONDITION, statusPatch, type ConditionState } from "./status.ts";
import { servingCondition, servingEvent, trafficPollDelay } from "./traffic.ts";
import { DrainWarnings } from "./drainWarning.ts";
import { GATE_POLL_MS, openGates, releaseGates, type GateListener } from "./readinessGates/openGates.ts";

/** Permanent cloud errors are looked at again only this often: no retry storm against the API. */
export const PERMANENT_ERROR_RETRY_MS = 5 * 60_000;

export interface ReconcileOutcome {
  requeueAfterMs?: number;
  /** The Service gave up its load balancer (capacity may have been freed for others). */
  released?: boolean;
}

export interface ReconcilerDeps {
  cache: ClusterCache;
  provider: LoadBalancerProvider;
  core: CoreV1Api;
  events: EventSink;
  classes: ClassConfig;
  intent?: IntentConfig;
  log: Logger;
  onOutcome?: (outcome: "ensured" | "unchanged" | "deleted" | "invalid" | "cloud_error") => void;
  /** Each pod readiness gate opened, with its reason. */
  onGateOpened?: GateListener;
}

export class ServiceReconciler {
  private readonly d: ReconcilerDeps;
  /** No-op annotations already told, per Service UID: one Normal Event each per controller run, not per reconcile. */
  private readonly toldNoops = new Map<string, Set<string>>();
  /** Looks at traffic that does not flow yet, per Service UID: the backoff's exponent. */
  private readonly trafficPolls = new Map<string, number>();
  /** Services whose traffic was last seen not flowing, so their recovery is told even when it passed through Unknown. */
  private readonly trafficDown = new Set<string>();
  /** The UID last reconciled under each key, so the state above goes with a Service deleted or given away. */
  private readonly uidOf = new Map<string, string>();
  private readonly drainWarnings: DrainWarnings;

  constructor(deps: ReconcilerDeps) {
    this.d = deps;
    this.drainWarnings = new DrainWarnings(deps.core);
  }

  /** `background`: nothing asked for this pass (the periodic resync); the provider may let users' changes go first. */
  async reconcile(key: string, opts: { background?: boolean } = {}): Promise<ReconcileOutcome> {
    const svc = this.d.cache.service(key);
    // Gone from the apiserver: the finalizer made sure it was cleaned up first, or it was never ours.
    if (!svc) return this.forgetAndRelease(key);
    if (svc.metadata?.uid !== this.uidOf.get(key)) this.forget(key);
    if (wantsLoadBalancer(svc, this.d.classes)) {
      this.uidOf.set(key, svc.metadata!.uid!);
      return this.ensure(svc, opts.background === true);
    }
    // Taken on once and not to be served now: let go, also when the finalizer was taken off by hand meanwhile
    // (the load balancer and the status are Portico's to take back all the same).
    if (tookOn(svc, this.d.classes)) return this.cleanup(svc);
    return this.forgetAndRelease(key);
  }

  /**
   * Not (or no longer) a Service of this controller's: pods still waiting for its readiness gate wait no more
   * once it is gone or no LoadBalancer at all. A gate is named after the Service alone, so while it is a
   * LoadBalancer another Portico controller (another class) may be the one to open it. The apiserver is asked
   * first, since the webhook gave the gate from a live read the cache may not have caught up with (a Service
   * and its Deployment applied together).
   */
  private async forgetAndRelease(key: string): Promise<ReconcileOutcome> {
    const [namespace, name] = key.split("/") as [string, string];
    const waiting = this.d.cache.podsAwaitingGate(namespace, name);
    if (waiting.length) {
      const live = await this.d.core.readNamespacedService({ name, namespace }).catch((err: unknown) => {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      });
      if (live?.spec?.type === "LoadBalancer") return this.forget(key);
      await releaseGates(this.d.core, namespace, name, waiting, this.d.log, this.d.onGateOpened);
    }
    return this.forget(key);
  }

  /** What was kept about the Service last reconciled under `key`: nothing of it is needed any more. */
  private forget(key: string): ReconcileOutcome {
    const uid = this.uidOf.get(key);
    if (uid === undefined) return {};
    this.uidOf.delete(key);
    this.toldNoops.delete(uid);
    this.trafficPolls.delete(uid);
    this.trafficDown.delete(uid);
    this.drainWarnings.forget(uid);
    return {};
  }

  private async ensure(original: V1Service, background: boolean): Promise<ReconcileOutcome> {
    const svc = await this.claim(original);
    const log = this.d.log.child({ service: key(svc) });
    const firstTime = !svc.status?.loadBalancer?.ingress?.length;
    try {
      const nodes = this.d.cache.allNodes();
      const slices = this.d.cache.slicesFor(svc.metadata!.namespace!, svc.metadata!.name!);
      const intent = buildIntent(svc, nodes, slices, classServedUnder(svc, this.d.classes), {
        ...this.d.intent,
        namespaceLabels: this.d.cache.namespaceLabels(svc.metadata!.namespace!),
        gatedPod: (namespace, name) => this.d.cache.gatedPod(namespace, name),
      });
      if (!hasFinalizer(original)) intent.claimedNow = true;
      await this.tellNoops(svc, intent.acceptedNoops ?? []);
      if (firstTime)
        await this.d.events.record(
          svc,
          "Normal",
          "EnsuringLoadBalancer",
          `Ensuring load balancer (${this.d.provider.name})`,
        );
      const result = await this.d.provider.ensure(intent, background ? { background } : {});
      const drain = await this.drainWarnings.check(intent, result.podDrain);
      for (const notice of drain ? [...result.notices, drain] : result.notices)
        await this.d.events.record(svc, notice.type, notice.reason, notice.message);
      if (result.changes.length) {
        log.info(
          {
            changes: result.changes,
            nodes: intent.nodes.map((n) => n.name),
            endpoints: intent.endpoints.length,
          },
          "load balancer changed",
        );
        const summary =
          result.changes.length === 1
            ? result.changes[0]!
            : `${result.changes.length} changes: ${result.changes.slice(0, 5).join("; ")}${result.changes.length > 5 ? "; ..." : ""}`;
        await this.d.events.record(
          svc,
          "Normal",
          firstTime ? "EnsuredLoadBalancer" : "UpdatedLoadBalancer",
          summary,
        );
      }
      const where = result.ingress.map((i) => i.hostname ?? i.ip).join(", ");
      await this.writeStatus(
        svc,
        result.ingress,
        {
          status: "True",
          reason: "Provisioned",
          // Made as asked; whether traffic reaches a backend is the Serving condition's to say.
          message: `Load balancer ${where || "(address pending)"} is in place for this Service`,
        },
        result.traffic ? servingCondition(result.traffic) : null,
      );
      await this.record(svc, result.recorded ?? {});
      const lookAgain = await this.followTraffic(svc, result.traffic);
      const gates = await openGates(this.d.core, intent, result.healthyEndpoints, log, this.d.onGateOpened);
      if (gates.opened.length) log.info({ pods: gates.opened }, "readiness gates opened");
      this.d.onOutcome?.(result.changes.length ? "ensured" : "unchanged");
      const requeueAfterMs = Math.min(
        result.requeueAfterMs ?? Infinity,
        lookAgain ?? Infinity,
        gates.waiting.length ? GATE_POLL_MS : Infinity,
      );
      return Number.isFinite(requeueAfterMs) ? { requeueAfterMs } : {};
    } catch (err) {
      return this.failed(svc, err, log);
    }
  }

  /** The provider's records on the Service, in one merge patch when one differs (none on a no-change resync). */
  private async record(svc: V1Service, recorded: Record<string, string>): Promise<void> {
    const current = svc.metadata?.annotations ?? {};
    const changed = Object.entries(recorded).filter(([k, v]) => current[k] !== v);
    if (!changed.length) return;
    await this.d.core.patchNamespacedService(
      {
        name: svc.metadata!.name!,
        namespace: svc.metadata!.namespace!,
        body: { metadata: { annotations: Object.fromEntries(changed) } },
      },
      mergePatch,
    );
  }

  /** Events when traffic stops or recovers, and when to look again while it does not flow (backing off). */
  private async followTraffic(
    svc: V1Service,
    traffic: TrafficState | undefined,
  ): Promise<number | undefined> {
    const uid = svc.metadata!.uid!;
    if (!traffic) {
      this.trafficPolls.delete(uid);
      return undefined;
    }
    const previous = svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
    const event = servingEvent(previous, traffic, this.trafficDown.has(uid));
    if (event) await this.d.events.record(svc, event.type, event.reason, event.message);
    if (traffic.flowing === false) this.trafficDown.add(uid);
    else if (traffic.flowing === true) this.trafficDown.delete(uid);
    const attempt = this.trafficPolls.get(uid) ?? 0;
    const delay = trafficPollDelay(traffic, attempt);
    if (delay === undefined) this.trafficPolls.delete(uid);
    else this.trafficPolls.set(uid, attempt + 1);
    return delay;
  }

  private async tellNoops(svc: V1Service, noops: readonly string[]): Promise<void> {
    const uid = svc.metadata!.uid!;
    const told = this.toldNoops.get(uid) ?? new Set<string>();
    for (const message of noops) {
      if (told.has(message)) continue;
      await this.d.events.record(svc, "Normal", "AnnotationAccepted", message);
      told.add(message);
    }
    if (told.size) this.toldNoops.set(uid, told);
  }

  private async failed(svc: V1Service, err: unknown, log: Logger): Promise<ReconcileOutcome> {
    if (err instanceof ConfigurationError) {
      log.warn({ reason: err.reason, field: err.field }, err.message);
      this.d.onOutcome?.("invalid");
      await this.d.events.record(svc, "Warning", err.reason, err.message);
      await this.writeStatus(svc, undefined, { status: "False", reason: err.reason, message: err.message });
      // Only a change to the Service (which triggers a reconcile by itself) can fix this, unless the provider
      // waits on something outside it (another controller still running) and says when to look again.
      const recheck = (err as { recheckAfterMs?: number }).recheckAfterMs;
      return recheck ? { requeueAfterMs: recheck } : {};
    }
    if (err instanceof CloudError) {
      log.warn({ operation: err.operation, code: err.code, retryable: err.retryable }, err.message);
      this.d.onOutcome?.("cloud_error");
      await this.d.events.record(svc, "Warning", "SyncLoadBalancerFailed", err.message);
      await this.writeStatus(svc, undefined, {
        status: "False",
        reason: err.retryable ? "CloudUnavailable" : "CloudRejected",
        message: err.message,
      });
      if (!err.retryable) return { requeueAfterMs: PERMANENT_ERROR_RETRY_MS };
      if (err.retryAfterMs) return { requeueAfterMs: err.retryAfterMs };
    }
    throw err;
  }

  private async cleanup(svc: V1Service): Promise<ReconcileOutcome> {
    const log = this.d.log.child({ service: key(svc) });
    const ref: ServiceRef = {
      namespace: svc.metadata!.namespace!,
      name: svc.metadata!.name!,
      uid: svc.metadata!.uid!,
    };
    await this.d.events.record(svc, "Normal", "DeletingLoadBalancer", "Deleting load balancer");
    try {
      await this.d.provider.delete(ref);
    } catch (err) {
      if (err instanceof CloudError && err.retryable) throw err;
      return this.failed(svc, err, log);
    }
    const resourceVersion = await this.releaseStatus(svc);
    await this.d.core.patchNamespacedService(
      {
        name: ref.name,
        namespace: ref.namespace,
        body: {
          metadata: {
            resourceVersion,
            finalizers: (svc.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER),
            annotations: {
              [MANAGED_BY_ANNOTATION]: null,
              ...Object.fromEntries((this.d.provider.recordedAnnotations ?? []).map((k) => [k, null])),
            },
          },
        },
      },
      mergePatch,
    );
    log.info("load balancer deleted");
    this.toldNoops.delete(ref.uid);
    this.trafficPolls.delete(ref.uid);
    this.trafficDown.delete(ref.uid);
    this.d.onOutcome?.("deleted");
    await this.d.events.record(svc, "Normal", "DeletedLoadBalancer", "Deleted load balancer");
    return { released: true };
  }

  /**
   * Takes back what Portico wrote into the status of a Service it lets go: the ingress and every condition of its
   * own. Guarded by the resourceVersion the decision was made on, as the finalizer's removal is: a Service changed
   * meanwhile (a LoadBalancer again, or taken on by another class's controller, which writes the same conditions)
   * is looked at afresh. Returns the resourceVersion that removal is then guarded by.
   */
  private async releaseStatus(svc: V1Service): Promise<string | undefined> {
    const meta = svc.metadata!;
    // Deleted, and held only by Portico's finalizer: the Service is gone the moment it comes off.
    const vanishes = meta.deletionTimestamp && (meta.finalizers ?? []).every((f) => f === FINALIZER);
    const body = vanishes ? undefined : releasePatch(svc);
    if (!body) return meta.resourceVersion;
    const patched = await this.d.core.patchNamespacedServiceStatus(
      {
        name: meta.name!,
        namespace: meta.namespace!,
        body: { metadata: { resourceVersion: meta.resourceVersion }, ...body },
      },
      strategicMergePatch,
    );
    return patched.metadata?.resourceVersion;
  }

  /** Finalizer and marker first, in one write guarded by resourceVersion, before anything is made in the cloud. */
  private async claim(svc: V1Service): Promise<V1Service> {
    if (hasFinalizer(svc) && tookOn(svc, this.d.classes)) return svc;
    return this.d.core.patchNamespacedService(
      {
        name: svc.metadata!.name!,
        namespace: svc.metadata!.namespace!,
        body: {
          metadata: {
            resourceVersion: svc.metadata!.resourceVersion,
            finalizers: [...(svc.metadata!.finalizers ?? []).filter((f) => f !== FINALIZER), FINALIZER],
            annotations: { [MANAGED_BY_ANNOTATION]: classServedUnder(svc, this.d.classes) },
          },
        },
      },
      mergePatch,
    );
  }

  private async writeStatus(
    svc: V1Service,
    ingress: Parameters<typeof statusPatch>[1],
    condition: ConditionState | undefined,
    serving?: ConditionState | null,
  ): Promise<void> {
    const body = statusPatch(svc, ingress, condition, new Date(), serving);
    if (!body) return;
    await this.d.core.patchNamespacedServiceStatus(
      { name: svc.metadata!.name!, namespace: svc.metadata!.namespace!, body },
      strategicMergePatch,
    );
  }
}

const key = (svc: V1Service) => `${svc.metadata?.namespace}/${svc.metadata?.name}`;
