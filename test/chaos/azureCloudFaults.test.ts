// ARM misbehaving at random — throttling with Retry-After, 5xx, 409 AnotherOperationInProgress, long-running
// operations that fail, answers held back, connections dropped after the request was served — while Services
// converge on the cluster's shared load balancers: everything converges to exactly what the Services ask for,
// every Retry-After is waited out before the same request goes again, and the requests stay bounded.
//
// The faults come from the ARM emulator itself, not from test/harness/faultProxy.ts: that proxy speaks plain
// HTTP, which the Azure SDK refuses to send bearer tokens over, answers in AWS's error format, and would be
// bypassed anyway by the operation URLs ARM hands out for polling, which name the emulator directly.
import type { V1Service } from "@kubernetes/client-node";
import type { FaultRule } from "../emulators/azure/index.ts";
import type { AzureProvider } from "../../providers/azure/provider.ts";
import { expect, test, waitFor } from "../harness/index.ts";
import { startPortico } from "../harness/controller.ts";
import { azureWorld, INTERNAL, lbService, serviceWants } from "../integration/azure/fixtures.ts";
import { inventory, inventoryProblems } from "../integration/azure/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 20);
const RATE = Number(process.env.CHAOS_FAULT_RATE ?? 0.15);
/** Longer than the emulator's default, so a client that ignores it stands out from one that waits. */
const RETRY_AFTER_SECONDS = 2;
/** Throttled answers to the first reads of the load balancers, whatever the seed. */
const THROTTLED_FIRST = 2;
/** Timer granularity, and the moment between a 429 reaching the client and the client taking note of it. */
const CLOCK_SLACK_MS = 5;

const RULES: FaultRule[] = [
  { kind: "throttle", retryAfterSeconds: RETRY_AFTER_SECONDS },
  { kind: "serverError", status: 500 },
  { kind: "serverError", status: 503 },
  { kind: "conflict" },
  { kind: "operationFailure" },
  { kind: "slow", delayMs: 1500 },
  { kind: "drop" },
];

function service(i: number): { spec: V1Service["spec"]; annotations: Record<string, string> } {
  return { spec: lbService(), annotations: i % 4 === 0 ? { ...INTERNAL } : {} };
}

/** One request as it left the controller for ARM, and its answer. */
interface WireRequest {
  method: string;
  path: string;
  sentAt: number;
  answeredAt?: number;
  status?: number;
  retryAfterSeconds?: number;
}

/**
 * Records every request as it goes on the wire, after every retry and wait of the controller's own: where the
 * emulator sees a request arrive is no measure of when it was sent, as a new TLS connection or a busy machine
 * delays it by hundreds of milliseconds.
 */
function recordWire(provider: AzureProvider): WireRequest[] {
  const wire: WireRequest[] = [];
  provider.clients.network.pipeline.addPolicy(
    {
      name: "chaosWireRecord",
      async sendRequest(request, next) {
        const entry: WireRequest = {
          method: request.method,
          path: new URL(request.url).pathname.toLowerCase(),
          sentAt: performance.now(),
        };
        wire.push(entry);
        try {
          const response = await next(request);
          entry.status = response.status;
          const seconds = Number(response.headers.get("retry-after"));
          if (seconds > 0) entry.retryAfterSeconds = seconds;
          return response;
        } finally {
          entry.answeredAt = performance.now();
        }
      },
    },
    { afterPhase: "Retry" },
  );
  return wire;
}

/**
 * Requests sent again, method and path alike, after an answer of 429 with Retry-After had told the client to
 * wait, and before that wait was over. Requests already on their way when the 429 arrived do not count: the
 * client could not have known.
 */
function retryAfterViolations(wire: WireRequest[]): string[] {
  const violations: string[] = [];
  for (const r of wire) {
    if (r.status !== 429 || !r.retryAfterSeconds || r.answeredAt === undefined) continue;
    const from = r.answeredAt + CLOCK_SLACK_MS;
    const until = r.answeredAt + r.retryAfterSeconds * 1000 - CLOCK_SLACK_MS;
    for (const next of wire)
      if (next.method === r.method && next.path === r.path && next.sentAt >= from && next.sentAt < until)
        violations.push(
          `${r.method} ${r.path}: 429 (Retry-After ${r.retryAfterSeconds} s), sent again ${Math.round(next.sentAt - r.answeredAt)} ms later`,
        );
  }
  return violations;
}

test(
  `Azure: ${SERVICES} Services converge while ${RATE * 100}% of ARM calls are throttled, fail, stall or drop`,
  { timeout: 600_000 },
  async ({ cluster, azure }) => {
    const seed = Number(process.env.CHAOS_SEED ?? 7);
    const world = await azureWorld(cluster, azure, 2);
    // Each request meets at most about RATE of faults over all kinds; conflicts (writes only) and failed
    // operations (new long-running operations only) apply to fewer requests, so the overall rate is lower.
    await azure.setFaults(seed, [
      // Throttling at least once whatever the seed, where every reconcile reads: the Retry-After check below
      // always has something to check.
      {
        kind: "throttle",
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        methods: ["GET"],
        pathContains: "/loadBalancers",
        count: THROTTLED_FIRST,
      },
      ...RULES.map((r) => ({ ...r, rate: RATE / RULES.length })),
    ]);
    const controller = await startPortico(cluster, { provider: "azure", workers: 8 });
    const wire = recordWire(controller.provider as AzureProvider);
    const started = performance.now();
    const names = Array.from({ length: SERVICES }, (_, i) => `svc-${i}`);
    await Promise.all(
      names.map((n, i) => {
        const { spec, annotations } = service(i);
        return cluster.createService(n, spec, annotations);
      }),
    );
    await waitFor(
      "every Service to get its address",
      async () =>
        (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.every(
          (s) => s.status?.loadBalancer?.ingress?.[0]?.ip,
        ),
      { timeoutMs: 300_000, intervalMs: 500 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; seed ${seed}, fault rate ${RATE}`);
    });
    const seconds = (performance.now() - started) / 1000;
    const injected: Record<string, number> = {};
    for (const r of await azure.faults()) {
      const kind = `${r.kind}${r.status ? ` ${r.status}` : ""}`;
      injected[kind] = (injected[kind] ?? 0) + r.injected;
    }
    const log = await azure.requests();
    await azure.clearFaults();
    const arm = log.filter((r) => !/ (token|discovery|other)$/.test(r.operation));
    const faults = Object.values(injected).reduce((a, b) => a + b, 0);
    const context = `seed ${seed}, fault rate ${RATE}`;
    console.log(
      `Azure cloud faults (${context}): ${SERVICES} Services converged in ${seconds.toFixed(1)} s; ` +
        `${arm.length} ARM requests (${(arm.length / SERVICES).toFixed(1)} per Service), ` +
        `${faults} faults injected ${JSON.stringify(injected)}`,
    );

    let problems: string[] = [];
    await waitFor(
      "the inventory to be exactly what the Services ask for",
      async () => {
        const wants = await serviceWants(cluster);
        problems = inventoryProblems(await inventory(azure), cluster.namespace, wants, [], world.nodeIPs);
        return problems.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    ).catch(() => undefined);
    expect(problems, context).toEqual([]);
    expect(faults - THROTTLED_FIRST, `${context}: faults injected at random`).toBeGreaterThan(0);
    // The throttled answers the controller received (some the emulator sent were lost to dropped connections).
    const throttled = wire.filter((r) => r.status === 429 && r.retryAfterSeconds);
    expect(throttled.length, context).toBeGreaterThan(0);
    expect(retryAfterViolations(wire), context).toEqual([]);
    // No storm: a Service costs under a dozen requests without faults (the shared load balancer's batching
    // saves some); retrying the injected faults adds a few, not dozens.
    expect(arm.length / SERVICES, context).toBeLessThan(30);
  },
);
