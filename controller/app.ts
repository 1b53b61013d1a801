// Assembles a running controller: cache, provider, reconciler, work queue and leader election.
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { LoadBalancerProvider } from "../providers/provider.ts";
import { ClusterCache } from "./cache.ts";
import type { ControllerConfig } from "./config.ts";
import { EventRecorder } from "./events.ts";
import { parseLabelSelector } from "../shared/labelSelector.ts";
import { LeaderElector } from "./leader.ts";
import { settingsAnnotation } from "./publishedSettings.ts";
import type { Logger } from "./log.ts";
import { Manager } from "./manager.ts";
import { ControllerMetrics } from "./metrics.ts";
import type { PoolState } from "../providers/metal/provider.ts";
import { PoolStatusWriter } from "./poolStatus.ts";
import { createProvider } from "./providers.ts";
import { ServiceReconciler } from "./reconciler.ts";

export interface Controller {
  provider: LoadBalancerProvider;
  cache: ClusterCache;
  manager: Manager;
  metrics: ControllerMetrics;
  isLeader(): boolean;
  synced(): boolean;
  /** Stops reconciling, releases the Lease and stops watching. */
  stop(): Promise<void>;
}

export async function startController(
  config: ControllerConfig,
  kc: KubeConfig,
  opts: { log: Logger; provider?: LoadBalancerProvider; metrics?: ControllerMetrics },
): Promise<Controller> {
  const { log } = opts;
  const metrics = opts.metrics ?? new ControllerMetrics();
  const core = kc.makeApiClient(CoreV1Api);
  const cache = new ClusterCache(kc, log, {
    ...(config.namespace ? { namespace: config.namespace } : {}),
    ...(config.nodeSelector ? { nodeLabelSelector: config.nodeSelector } : {}),
    pools: config.provider === "metal",
    namespaces:
      config.provider === "azure" &&
      (config.azure?.multipleStandardLoadBalancerConfigurations ?? []).some(
        (c) => c.serviceNamespaceSelector !== undefined,
      ),
    ...(config.provider === "metal" && config.metallb && config.metallb.mode !== "off"
      ? { metallbNamespace: config.metallb.namespace, metallbRequired: config.metallb.mode === "on" }
      : {}),
  });
  const provider =
    opts.provider ??
    (await createProvider(config, metrics, cache, {
      core,
      coordination: kc.makeApiClient(CoordinationV1Api),
    }));
  const classes = {
    loadBalancerClass: config.loadBalancerClass,
    defaultForUnclassed: config.defaultForUnclassed,
    ...(config.alsoServes ? { alsoServes: config.alsoServes } : {}),
  };
  const reconciler = new ServiceReconciler({
    cache,
    provider,
    core,
    events: new EventRecorder(core, log),
    classes,
    log,
    onOutcome: (outcome) => metrics.reconciles.inc({ outcome }),
  });
  const poolStatus =
    "poolState" in provider
      ? new PoolStatusWriter(
          kc,
          cache,
          () => (provider as { poolState(): PoolState }).poolState(),
          log,
          config.namespace,
        )
      : undefined;
  const manager = new Manager({
    ...(poolStatus ? { afterReconcile: () => poolStatus.schedule() } : {}),
    afterOrphanCollection: (outcome, deleted) => {
      metrics.orphanCollections.inc({ outcome });
      metrics.orphansDeleted.inc(deleted);
    },
    cache,
    reconciler,
    provider,
    core,
    classes,
    log,
    workers: config.workers,
    resyncPeriodMs: config.resyncPeriodMs,
    orphanCollectionPeriodMs: config.orphanCollectionPeriodMs,
    ...(config.namespace ? { namespace: config.namespace } : {}),
  });
  let synced = false;
  await cache.start();
  synced = true;
  log.info({ class: config.loadBalancerClass, provider: provider.name }, "caches synced");
  metrics.queueDepthSource = () => manager.queue.length;

  let leading = false;
  const lead = async (signal: AbortSignal) => {
    leading = true;
    metrics.leader.set(1);
    log.info("leading: reconciling Services");
    manager.start();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    await manager.stop();
    leading = false;
    metrics.leader.set(0);
  };
  let elector: LeaderElector | undefined;
  let running: Promise<void> | undefined;
  const stopped = new AbortController();
  if (config.leaderElection.enabled) {
    const le = config.leaderElection;
    elector = new LeaderElector({
      coordination: kc.makeApiClient(CoordinationV1Api),
      namespace: le.namespace,
      name: le.name,
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      annotations: settingsAnnotation(config),
      log: (msg, fields) => log.info(fields ?? {}, msg),
    });
    running = elector.run({
      onStartedLeading: lead,
      onStoppedLeading: () => log.warn("stopped leading"),
      onNewLeader: (id) => log.info({ leader: id }, "leader observed"),
    });
  } else {
    running = lead(stopped.signal);
  }
  return {
    provider,
    cache,
    manager,
    metrics,
    isLeader: () => leading,
    synced: () => synced,
    async stop() {
      if (elector) await elector.stop();
      else stopped.abort();
      await running;
      poolStatus?.stop();
      await cache.stop();
    },
  };
}

/** Parses the node selector early so a typo fails at start-up, not at the first reconcile. */
export function validateConfig(config: ControllerConfig): void {
  if (config.nodeSelector) parseLabelSelector(config.nodeSelector);
}
