// Assembles a running controller: cache, provider, reconciler, work queue and leader election.
import { CoordinationV1Api, CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { LoadBalancerProvider } from "../providers/provider.ts";
import { wantsLoadBalancer } from "../providers/classes.ts";
import { ClusterCache } from "./runtime/cache.ts";
import { descriptorOf, type ControllerConfig } from "./config.ts";
import { controllerEvents } from "./events.ts";
import { parseLabelSelector } from "../shared/labelSelector.ts";
import { LeaderElector } from "./runtime/leader.ts";
import { settingsAnnotation } from "./publishedSettings.ts";
import type { Logger } from "../shared/log.ts";
import { Manager } from "./manager.ts";
import { ControllerMetrics } from "./metrics.ts";
import type { StartedProvider } from "../providers/descriptor.ts";
import { ServiceReconciler } from "./reconciler.ts";
import { startReadinessGateWebhook, type ReadinessGateWebhook } from "./readinessGates/start.ts";
import { GatewayClassReconciler } from "./gateway/classReconciler.ts";
import { gatewayControllerName } from "./gateway/classes.ts";

export interface Controller {
  provider: LoadBalancerProvider;
  cache: ClusterCache;
  manager: Manager;
  metrics: ControllerMetrics;
  /** The readiness-gate webhook, when configured: served by every replica, leading or not. */
  webhook?: ReadinessGateWebhook;
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
  // The descriptor read its own settings from its flags; it alone knows what they mean.
  const descriptor = descriptorOf(config);
  const { settings } = config;
  const needs = descriptor.needs(settings);
  const cache = new ClusterCache(kc, log, {
    ...(config.namespace ? { namespace: config.namespace } : {}),
    ...(config.nodeSelector ? { nodeLabelSelector: config.nodeSelector } : {}),
    pools: needs.pools ?? false,
    gatedPods: true,
    namespaces: needs.namespaces ?? false,
    ...(needs.metallb
      ? { metallbNamespace: needs.metallb.namespace, metallbRequired: needs.metallb.required }
      : {}),
  });
  const classes = {
    loadBalancerClass: config.loadBalancerClass,
    defaultForUnclassed: config.defaultForUnclassed,
    ...(config.alsoServes ? { alsoServes: config.alsoServes } : {}),
  };
  const started: StartedProvider = opts.provider
    ? { provider: opts.provider }
    : await descriptor.start(settings, {
        clusterName: config.clusterName,
        classes,
        cluster: cache,
        kc,
        kube: { core, coordination: kc.makeApiClient(CoordinationV1Api) },
        log,
        ...(config.namespace ? { namespace: config.namespace } : {}),
        onCloudCall: (...call) => recordCloudCall(metrics, ...call),
        onStatusCheck: (kind, name, outcome) => metrics.statusChecks.inc({ kind, name, outcome }),
      });
  const { provider } = started;
  const events = controllerEvents(core, log);
  const reconciler = new ServiceReconciler({
    cache,
    provider,
    core,
    events,
    classes,
    log,
    onOutcome: (outcome) => metrics.reconciles.inc({ outcome }),
    onGateOpened: (reason) => metrics.gatesOpened.inc({ reason }),
  });
  const manager = new Manager({
    ...(started.afterReconcile ? { afterReconcile: started.afterReconcile } : {}),
    afterOrphanCollection: (outcome, deleted) => {
      metrics.orphanCollections.inc({ outcome });
      metrics.orphansDeleted.inc(deleted);
    },
    afterSecurityRuleCheck: (outcome, drifted) => {
      metrics.securityRuleChecks.inc({ outcome });
      for (const d of drifted)
        metrics.securityRuleRepairs.inc({ how: d.restored ? "restored" : "reconciled" });
    },
    events,
    securityRuleCheckPeriodMs: config.securityRuleCheckPeriodMs,
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
  const webhook = config.webhook
    ? startReadinessGateWebhook(config.webhook, {
        kc,
        core,
        provider,
        classes,
        log,
        ...(config.namespace ? { servedNamespace: config.namespace } : {}),
      })
    : undefined;
  const gatewayClasses = new GatewayClassReconciler({
    kc,
    controllerName: gatewayControllerName(config.provider),
    log,
    resyncPeriodMs: config.resyncPeriodMs,
  });
  let synced = false;
  await Promise.all([cache.start(), gatewayClasses.start()]);
  synced = true;
  log.info({ class: config.loadBalancerClass, provider: provider.name }, "caches synced");
  metrics.queueDepthSource = () => manager.queue.length;
  metrics.servicesSource = () => cache.services.list().filter((svc) => wantsLoadBalancer(svc, classes));
  if (started.poolCounts) metrics.poolCountsSource = started.poolCounts;

  let leading = false;
  const lead = async (signal: AbortSignal) => {
    leading = true;
    metrics.leader.set(1);
    log.info("leading: reconciling Services");
    manager.start();
    gatewayClasses.lead();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.all([manager.stop(), gatewayClasses.unlead()]);
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
    ...(webhook ? { webhook } : {}),
    isLeader: () => leading,
    synced: () => synced,
    async stop() {
      if (elector) await elector.stop();
      else stopped.abort();
      await running;
      started.stop?.();
      await webhook?.stop();
      await gatewayClasses.stop();
      await cache.stop();
    },
  };
}

/** Parses the node selector early so a typo fails at start-up, not at the first reconcile. */
export function validateConfig(config: ControllerConfig): void {
  if (config.nodeSelector) parseLabelSelector(config.nodeSelector);
}

const THROTTLE_CODES = /Throttl|RequestLimitExceeded|TooManyRequests|^429$/;

/** One cloud call in the controller's metrics: its count, how long the cloud took, and whether it was throttled. */
function recordCloudCall(
  metrics: ControllerMetrics,
  operation: string,
  outcome: "ok" | "error",
  code: string | undefined,
  seconds: number,
): void {
  metrics.cloudCalls.inc({ operation, outcome });
  metrics.cloudCallDuration.observe({ operation }, seconds);
  if (code && THROTTLE_CODES.test(code)) metrics.cloudThrottles.inc({ operation });
}
