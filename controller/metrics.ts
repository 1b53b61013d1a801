// The controller's Prometheus metrics (served by shared/metricsServer.ts with the health endpoints).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { V1Service } from "@kubernetes/client-node";
import { liveRateLimiters } from "../providers/rateLimit.ts";
import type { PoolCounts } from "../shared/allocationTypes.ts";
import { READY_CONDITION, SERVING_CONDITION } from "../shared/conditions.ts";

/** The conditions counted in portico_services, by the short name the metric's label gives them. */
const COUNTED_CONDITIONS = { LoadBalancerReady: READY_CONDITION, Serving: SERVING_CONDITION } as const;

/**
 * How many Services stand at each status of each of Portico's conditions: "True", "False", "Unknown", or "absent"
 * (not written yet). Every condition counts every Service, so each condition's counts add up to the total.
 */
export function countConditions(services: readonly V1Service[]): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const [label, type] of Object.entries(COUNTED_CONDITIONS)) {
    const byStatus = new Map<string, number>([
      ["True", 0],
      ["False", 0],
      ["Unknown", 0],
      ["absent", 0],
    ]);
    for (const svc of services) {
      const status = svc.status?.conditions?.find((c) => c.type === type)?.status ?? "absent";
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    }
    counts.set(label, byStatus);
  }
  return counts;
}

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
  readonly securityRuleChecks = new Counter({
    name: "portico_security_rule_checks_total",
    help:
      "Comparisons of the security rules Portico made (AWS security groups and backend rules, Azure NSG rules) " +
      "with the cloud, for the whole cluster at once, by outcome (done, failed)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly securityRuleRepairs = new Counter({
    name: "portico_security_rule_repairs_total",
    help:
      "Services whose security rules a check found changed outside Portico, and restored, by how: restored (by " +
      "the check itself: rules Services share) or reconciled (the Service reconciled at once)",
    labelNames: ["how"],
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
    help:
      "Service reconciles by outcome: ensured (the cloud changed), unchanged, deleted, invalid (settings refused), " +
      "cloud_error (a cloud call failed)",
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
  /** Read when scraped: the Services this controller serves. */
  servicesSource: () => readonly V1Service[] = () => [];
  readonly services: Gauge = new Gauge({
    name: "portico_services",
    help:
      "LoadBalancer Services this controller serves, by condition (LoadBalancerReady: the load balancer is made " +
      "as asked; Serving: traffic reaches a backend) and status (True, False, Unknown, absent: not written yet)",
    labelNames: ["condition", "status"],
    registers: [this.registry],
    collect: (): void => {
      for (const [condition, byStatus] of countConditions(this.servicesSource()))
        for (const [status, n] of byStatus) this.services.set({ condition, status }, n);
    },
  });
  /** Read when scraped: the address pools' counts (bare metal; none elsewhere). */
  poolCountsSource: () => readonly PoolCounts[] = () => [];
  readonly poolAddresses: Gauge = new Gauge({
    name: "portico_pool_addresses",
    help: "Addresses of each IPAddressPool by family (IPv4, IPv6) and state (assigned, available); bare metal",
    labelNames: ["pool", "family", "state"],
    registers: [this.registry],
    collect: (): void => {
      this.poolAddresses.reset();
      for (const c of this.poolCountsSource()) {
        const set = (family: string, state: string, n: bigint) =>
          this.poolAddresses.set({ pool: c.pool, family, state }, Number(n));
        set("IPv4", "assigned", c.assignedIPv4);
        set("IPv4", "available", c.availableIPv4);
        set("IPv6", "assigned", c.assignedIPv6);
        set("IPv6", "available", c.availableIPv6);
      }
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
