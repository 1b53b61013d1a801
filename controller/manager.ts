// Wires the shared cache to the work queue and the reconciler: every change that can affect a Service's load
// balancer enqueues that Service; a periodic resync and orphan collection catch whatever was missed, and a more
// frequent security-rule check restores the rules that decide who reaches a Service.
import type { CoreV1Api, KubernetesObject, V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { gatedPod, waitsForGate } from "./readinessGates/gates.ts";
import { createHash } from "node:crypto";
import { withPriority } from "../providers/priority.ts";
import type { LoadBalancerProvider, SecurityRuleDrift, ServiceRef } from "../providers/provider.ts";
import { serviceKey, type ClusterCache } from "./runtime/cache.ts";
import {
  FINALIZER,
  MANAGED_BY_ANNOTATION,
  tookOn,
  wantsLoadBalancer,
  type ClassConfig,
} from "../providers/classes.ts";
import { nodeFingerprint } from "./runtime/nodeFingerprint.ts";
import { collectOrphans } from "./garbage.ts";
import { checkSecurityRules } from "./securityRuleCheck.ts";
import type { EventSink } from "../shared/events.ts";
import type { Logger } from "../shared/log.ts";
import { startWorkers, WorkQueue, type Workers } from "./runtime/queue.ts";
import type { ServiceReconciler } from "./reconciler.ts";
import { SERVICE_NAME_LABEL } from "./intent.ts";

export interface ManagerOptions {
  cache: ClusterCache;
  reconciler: ServiceReconciler;
  provider: LoadBalancerProvider;
  core: CoreV1Api;
  classes: ClassConfig;
  log: Logger;
  workers: number;
  resyncPeriodMs: number;
  orphanCollectionPeriodMs: number;
  namespace?: string;
  queue?: WorkQueue;
  /** Called after every reconcile (e.g. to refresh IP pool status). */
  afterReconcile?: () => void;
  /** Called after every orphan collection, with how it ended and how many Services' resources it deleted. */
  afterOrphanCollection?: (outcome: "done" | "failed", deleted: number) => void;
  /**
   * How often the provider's security rules are compared with the cloud (checkSecurityRules); absent, or a
   * provider without the check: never. The Events it records go to `events`.
   */
  securityRuleCheckPeriodMs?: number;
  events?: EventSink;
  /** Called after every security-rule check, with how it ended and the Services it found changed. */
  afterSecurityRuleCheck?: (outcome: "done" | "failed", drifted: readonly SecurityRuleDrift[]) => void;
}

export class Manager {
  readonly queue: WorkQueue;
  private readonly o: ManagerOptions;
  private readonly nodeFingerprints = new Map<string, string>();
  private readonly serviceFingerprints = new Map<string, string>();
  private readonly otherFingerprints = new Map<string, string>();
  private readonly sharedCapacity: boolean;
  private workers: Workers | undefined;
  private timers: NodeJS.Timeout[] = [];

  constructor(opts: ManagerOptions) {
    this.o = opts;
    this.queue = opts.queue ?? new WorkQueue();
    this.sharedCapacity = opts.provider.capacityIsShared === true;
    opts.cache.onChange((kind, verb, obj) => this.onChange(kind, verb, obj));
  }

  /** Starts reconciling (the cache must be started and synced). Call only while leading. */
  start(): void {
    const { log } = this.o;
    this.o.provider.startTerm?.();
    this.workers = startWorkers(this.queue, {
      workers: this.o.workers,
      // Keys queued by background work alone (the periodic resync, a look again nothing asked for): their
      // reconcile is background work, after users' changes in the queue and at the cloud's rate limit.
      handle: async (key, _signal, { background }) => {
        const outcome = await this.o.reconciler.reconcile(key, { background });
        // A released address may be what another Service is waiting for.
        if (outcome.released && this.sharedCapacity) this.enqueueAll();
        this.o.afterReconcile?.();
        return outcome;
      },
      onError: (key, err) =>
        log.warn(
          { service: key, err: (err as Error).message ?? String(err) },
          "reconcile failed; retrying with backoff",
        ),
    });
    this.enqueueAll();
    this.timers.push(setInterval(() => this.enqueueAll(true), this.o.resyncPeriodMs));
    // Nothing asked for it: its cloud calls wait behind changes users wait for.
    const collect = () =>
      withPriority("background", () =>
        collectOrphans({
          provider: this.o.provider,
          core: this.o.core,
          log,
          ...(this.o.namespace ? { namespace: this.o.namespace } : {}),
        })
          .then(async ({ deleted, owning }) => {
            await this.o.provider.settle?.(this.inView(), owning);
            this.o.afterOrphanCollection?.("done", deleted.length);
          })
          .catch((err: unknown) => {
            log.warn({ err: (err as Error).message }, "orphan collection failed; will try again");
            this.o.afterOrphanCollection?.("failed", 0);
          }),
      );
    this.timers.push(
      setTimeout(() => void collect(), 0),
      setInterval(() => void collect(), this.o.orphanCollectionPeriodMs),
    );
    const period = this.o.securityRuleCheckPeriodMs;
    if (period && this.o.provider.checkSecurityRules && this.o.events) {
      const events = this.o.events;
      let running = false;
      const check = async () => {
        // A check slower than its period (a throttled cloud) is not joined by another.
        if (running) return;
        running = true;
        try {
          const { drifted, reconcile } = await checkSecurityRules({
            provider: this.o.provider,
            service: (key) => this.o.cache.service(key),
            events,
            log,
          });
          // Clients may be cut off: the Services go before background work, as a change users wait for.
          for (const key of reconcile) this.enqueue(key);
          this.o.afterSecurityRuleCheck?.("done", drifted);
        } catch (err) {
          log.warn({ err: (err as Error).message }, "security rule check failed; will try again");
          this.o.afterSecurityRuleCheck?.("failed", []);
        } finally {
          running = false;
        }
      };
      this.timers.push(setInterval(() => void check(), period));
    }
  }

  /** Stops reconciling (leadership lost or shutting down); the queue keeps collecting keys for a next term. */
  async stop(): Promise<void> {
    this.timers.forEach((t) => clearTimeout(t));
    this.timers = [];
    await this.workers?.stop();
    this.workers = undefined;
  }

  /** The Services this controller gives load balancers to (not those it only cleans up after). */
  private inView(): ServiceRef[] {
    return this.o.cache.services
      .list()
      .filter((svc) => wantsLoadBalancer(svc, this.o.classes))
      .map((svc) => ({
        namespace: svc.metadata!.namespace!,
        name: svc.metadata!.name!,
        uid: svc.metadata!.uid!,
      }));
  }

  /** `background`: the periodic resync, which nothing asked for (a key already waiting for a change stays so). */
  private enqueueAll(background = false): void {
    for (const svc of this.o.cache.services.list())
      if (this.relevant(svc)) this.queue.add(serviceKey(svc), background);
  }

  private enqueue(key: string): void {
    this.queue.add(key);
  }

  private relevant(svc: Parameters<typeof wantsLoadBalancer>[0]): boolean {
    return wantsLoadBalancer(svc, this.o.classes) || tookOn(svc, this.o.classes);
  }

  private onChange(kind: string, verb: string, obj: KubernetesObject): void {
    if (kind === "service") {
      const key = serviceKey(obj);
      const fingerprint = verb === "delete" ? "" : serviceFingerprint(obj);
      if (verb === "update" && this.serviceFingerprints.get(key) === fingerprint) return;
      if (verb === "delete") this.serviceFingerprints.delete(key);
      else this.serviceFingerprints.set(key, fingerprint);
      this.enqueue(key);
    } else if (kind === "ipaddresspool" || kind === "namespace") {
      // Pool specs and namespace labels decide who may have which address: everyone is looked at again. Pool
      // status (Portico's own counts) and other namespace changes do not.
      const key = `${kind}/${obj.metadata?.name}`;
      const what = kind === "ipaddresspool" ? (obj as { spec?: unknown }).spec : obj.metadata?.labels;
      const fingerprint = verb === "delete" ? "" : JSON.stringify(what ?? null);
      if (verb === "update" && this.otherFingerprints.get(key) === fingerprint) return;
      if (verb === "delete") this.otherFingerprints.delete(key);
      else this.otherFingerprints.set(key, fingerprint);
      this.enqueueAll();
    } else if (kind === "servicel2status") {
      // Where the Service's traffic enters changed (bare metal): its Serving condition may have.
      this.enqueue(`${obj.metadata?.namespace}/${obj.metadata?.name}`);
    } else if (kind === "pod") {
      // A gated pod's containers became ready (its EndpointSlice does not change: the pod is still not ready),
      // so each Service whose gate it now waits for is looked at again.
      const gated = gatedPod(obj);
      for (const service of gated?.services ?? [])
        if (verb !== "delete" && waitsForGate(gated, service))
          this.enqueue(`${obj.metadata?.namespace}/${service}`);
    } else if (kind === "endpointslice") {
      const service = (obj as V1EndpointSlice).metadata?.labels?.[SERVICE_NAME_LABEL];
      if (service) this.enqueue(`${obj.metadata?.namespace}/${service}`);
    } else if (kind === "node") {
      const name = obj.metadata!.name!;
      const fingerprint = verb === "delete" ? "" : nodeFingerprint(obj);
      if (this.nodeFingerprints.get(name) === fingerprint) return; // a heartbeat: nothing a target depends on
      if (verb === "delete") this.nodeFingerprints.delete(name);
      else this.nodeFingerprints.set(name, fingerprint);
      this.enqueueAll();
    }
  }
}

/**
 * What a Service asks for. Status-only updates (most of them Portico's own writes) leave it unchanged, and so
 * does Portico's claim (its finalizer and marker), so writing those does not cost another reconcile. Services
 * have no metadata.generation to tell spec changes apart, so the spec itself is compared.
 */
function serviceFingerprint(svc: V1Service): string {
  const m = svc.metadata ?? {};
  const { [MANAGED_BY_ANNOTATION]: _claim, ...annotations } = m.annotations ?? {};
  const finalizers = (m.finalizers ?? []).filter((f) => f !== FINALIZER);
  // Labels too: Azure places Services on load balancers by them, and bare-metal pools select by them. Kept
  // for every Service, so a digest rather than the text.
  const text = JSON.stringify([svc.spec, annotations, m.labels, finalizers, m.deletionTimestamp]);
  return createHash("sha256").update(text).digest("base64");
}
