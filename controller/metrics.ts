// The controller's Prometheus metrics (served by shared/metricsServer.ts with the health endpoints).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { liveRateLimiters } from "../providers/rateLimit.ts";

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly orphanCollections = new Counter({
    name: "portico_orphan_collections_total",
    help: "Orphan collections (cloud resources of Services that no longer exist), by outcome (done, failed)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly orphansDeleted = new Counter({
    name: "portico_orphans_deleted_total",
    help: "Services whose orphaned cloud resources an orphan collection deleted",
    registers: [this.registry],
  });
  readonly statusChecks = new Counter({
    name: "portico_status_checks_total",
    help:
      "Statuses of cluster objects other than Services (IPAddressPools) compared with what they should say, by " +
      "kind, name and whether a write was needed (written, unchanged)",
    labelNames: ["kind", "name", "outcome"],
    registers: [this.registry],
  });
  readonly reconciles = new Counter({
    name: "portico_reconciles_total",
    help: "Service reconciles by outcome",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly gatesOpened = new Counter({
    name: "portico_readiness_gates_opened_total",
    help:
      "Pod readiness gates opened, by reason: TargetHealthy (the load balancer found the pod healthy), NoPodHealth " +
      "(it sends to nodes), NoLoadBalancer (the Service is gone or no LoadBalancer)",
    labelNames: ["reason"],
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: "portico_reconcile_duration_seconds",
    help: "Time to reconcile one Service",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly cloudCalls = new Counter({
    name: "portico_cloud_calls_total",
    help: "Cloud API calls by operation and outcome",
    labelNames: ["operation", "outcome"],
    registers: [this.registry],
  });
  // How long the cloud takes to answer, apart from the time a call waits for the rate limiter: a slow API (or
  // emulator) and a binding limit look alike in reconcile times, and this tells them apart.
  readonly cloudCallDuration = new Histogram({
    name: "portico_cloud_call_duration_seconds",
    help: "Time the cloud took to answer a call (retries are calls of their own), by operation",
    labelNames: ["operation"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly cloudThrottles = new Counter({
    name: "portico_cloud_throttles_total",
    help: "Cloud API calls refused for throttling",
    labelNames: ["operation"],
    registers: [this.registry],
  });
  /** Read when metrics are scraped. */
  queueDepthSource: () => number = () => 0;
  readonly queueDepth: Gauge = new Gauge({
    name: "portico_workqueue_depth",
    help: "Services waiting to be reconciled",
    registers: [this.registry],
    collect: (): void => this.queueDepth.set(this.queueDepthSource()),
  });
  // The cloud rate limiters' state (providers/rateLimit.ts), read from the live limiters when scraped:
  // the rate each bucket has learned, the calls waiting for their turn, and the time calls spent waiting.
  readonly cloudRateLimit: Gauge = new Gauge({
    name: "portico_cloud_rate_limit_per_second",
    help: "Calls per second the client-side rate limiter allows, by cloud bucket (learned from throttles)",
    labelNames: ["bucket"],
    registers: [this.registry],
    collect: (): void => {
      this.cloudRateLimit.reset();
      for (const limiter of liveRateLimiters())
        for (const b of limiter.stats()) this.cloudRateLimit.set({ bucket: b.bucket }, b.ratePerSecond);
    },
  });
  readonly cloudRateLimitWaiting: Gauge = new Gauge({
    name: "portico_cloud_rate_limit_waiting",
    help: "Cloud calls waiting for the client-side rate limiter, by priority",
    labelNames: ["priority"],
    registers: [this.registry],
    collect: (): void => {
      const waiting = { user: 0, background: 0 };
      for (const limiter of liveRateLimiters())
        for (const b of limiter.stats()) {
          waiting.user += b.waiting.user;
          waiting.background += b.waiting.background;
        }
      for (const [priority, n] of Object.entries(waiting)) this.cloudRateLimitWaiting.set({ priority }, n);
    },
  });
  readonly cloudRateLimitWaited: Counter = new Counter({
    name: "portico_cloud_rate_limit_wait_seconds_total",
    help: "Time cloud calls spent waiting for the client-side rate limiter, by priority",
    labelNames: ["priority"],
    registers: [this.registry],
    collect: (): void => {
      const waited = { user: 0, background: 0 };
      for (const limiter of liveRateLimiters()) {
        waited.user += limiter.waited.user;
        waited.background += limiter.waited.background;
      }
      this.cloudRateLimitWaited.reset();
      for (const [priority, seconds] of Object.entries(waited))
        this.cloudRateLimitWaited.inc({ priority }, seconds);
    },
  });
  readonly cloudRateLimitBucketWaited: Counter = new Counter({
    name: "portico_cloud_rate_limit_bucket_wait_seconds_total",
    help: "Time cloud calls spent waiting for the client-side rate limiter, by cloud bucket (which limit binds)",
    labelNames: ["bucket"],
    registers: [this.registry],
    collect: (): void => {
      this.cloudRateLimitBucketWaited.reset();
      for (const limiter of liveRateLimiters())
        for (const b of limiter.stats())
          this.cloudRateLimitBucketWaited.inc({ bucket: b.bucket }, b.waitedSeconds);
    },
  });
  readonly leader = new Gauge({
    name: "portico_leader",
    help: "1 while this replica leads",
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
