// `make bench-azure`, its last phase (on unless BENCH_THROTTLE=0): new Services under ARM's request throttling,
// emulated with Azure's documented figures (test/emulators/azure/throttling.ts), with Portico's rate limiter on.
import type { ControllerProcess } from "../test/harness/controllerProcess.ts";
import { total } from "../test/harness/controllerProcess.ts";
import { TestAzure, type ThrottlingState } from "../test/harness/azure.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { armCalls } from "./armCalls.ts";
import { waitedByBucket } from "./calls.ts";
import { sleep } from "./report.ts";
import { sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const THROTTLE_SERVICES = Number(process.env.BENCH_THROTTLE_SERVICES ?? SERVICES);
// The share of every limit left to "the rest of the subscription" (0: Portico has the whole of it).
const THROTTLE_RESERVE = Number(process.env.BENCH_THROTTLE_RESERVE ?? 0);
const DEADLINE_MS = 60 * 60_000;

/**
 * N new Services on a second cluster (its own namespace, nodes, load balancers) in a fresh subscription (the
 * earlier phases' public IPs would leave no room under the region's quota), under ARM's throttling with Azure's
 * figures less the reserve; the controller runs with its rate limiter on. The first Service is measured alone;
 * the others are made together, from full buckets and empty windows. The floor is the least time their calls could
 * take (per limit: calls beyond a bucket's burst over its refill rate, or a window's length per whole window's
 * worth beyond the first; the slowest limit's), so the ratio says how close to the subscription's limits Portico ran.
 */
export async function throttledPhase(p: {
  kubeconfig: string;
  prepare: (on: TestCluster) => Promise<string>;
  start: (log: string, on: TestCluster, file: string, rateLimit: string) => Promise<ControllerProcess>;
  withEndpoint: (name: string, on: TestCluster) => Promise<object>;
  progress: (what: string) => void;
}) {
  const azure = await TestAzure.fresh();
  const cluster = await TestCluster.create(p.kubeconfig, "throttled");
  const ns = cluster.namespace;
  const file = await p.prepare(cluster);
  const throttling = { reserve: THROTTLE_RESERVE };
  await azure.setThrottling(throttling);
  const controller = await p.start("controller-throttled.log", cluster, file, "on");
  const withIp = async () =>
    (await cluster.core.listNamespacedService({ namespace: ns })).items.filter(
      (s) => s.status?.loadBalancer?.ingress?.[0]?.ip,
    ).length;
  try {
    await settled(controller);
    p.progress(`one Service under ARM's throttling (reserve ${THROTTLE_RESERVE})`);
    await azure.setThrottling(throttling);
    await azure.clearRequests();
    await cluster.core.createNamespacedService({
      namespace: ns,
      body: await p.withEndpoint("single", cluster),
    });
    while ((await withIp()) < 1) await sleep(250);
    await settled(controller);
    const single = armCalls(await azure.requestCounts());
    const singleThrottled = (await azure.throttling()).throttled ?? 0;

    const bulk = THROTTLE_SERVICES - 1;
    p.progress(`${bulk} Services under ARM's throttling`);
    await azure.setThrottling(throttling);
    await azure.clearRequests();
    const before = await controller.metrics();
    const usage = sampleUsage(controller);
    const started = performance.now();
    for (let i = 0; i < bulk; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, bulk - i) }, async (_, k) =>
          cluster.core.createNamespacedService({
            namespace: ns,
            body: await p.withEndpoint(`t${i + k}`, cluster),
          }),
        ),
      );
    // When half and nine tenths had their address: a long tail after those is not the limits' doing.
    const reached = new Map<number, number>();
    for (;;) {
      const done = (await withIp()) - 1;
      for (const share of [0.5, 0.9])
        if (done >= share * bulk && !reached.has(share))
          reached.set(share, +((performance.now() - started) / 1000).toFixed(1));
      if (done >= bulk) break;
      if (performance.now() - started > DEADLINE_MS)
        throw new Error(`only ${done} of ${bulk} Services got an IP under throttling in an hour`);
      await sleep(500);
    }
    // Converged when every Service has its IP: the floor is that of the calls made until then.
    const seconds = (performance.now() - started) / 1000;
    const state: ThrottlingState = await azure.throttling();
    const calls = armCalls(await azure.requestCounts());
    await settled(controller);
    const peak = await usage.stop();
    const after = await controller.metrics();
    const floor = state.floor ?? { seconds: 0 };
    const binding = floor.limit ? state.limits?.[floor.limit] : undefined;
    // Portico's limiter names ARM's per-principal buckets arm:<type>; Microsoft.Network's windows as the emulator.
    const limiterBucket = floor.limit?.replace(/^principal:/, "arm:");
    const learned = [...after].find(([k]) =>
      k.startsWith(`portico_cloud_rate_limit_per_second{bucket="${limiterBucket}"`),
    )?.[1];
    const spec = binding?.spec as {
      capacity?: number;
      refillPerSecond?: number;
      limit?: number;
      windowSeconds?: number;
    };
    return {
      services: THROTTLE_SERVICES,
      reserve: THROTTLE_RESERVE,
      newService: { armCalls: single.calls, writes: single.writes, throttledAnswers: singleThrottled },
      bulk: {
        services: bulk,
        seconds: +seconds.toFixed(1),
        secondsToHalf: reached.get(0.5),
        secondsToNineTenths: reached.get(0.9),
        floorSeconds: +floor.seconds.toFixed(1),
        timeOverFloor: floor.seconds > 0 ? +(seconds / floor.seconds).toFixed(2) : "no limit binds",
        bindingLimit: binding
          ? `${floor.limit}: ${binding.admitted} calls, ` +
            (spec.windowSeconds
              ? `${spec.limit} per ${spec.windowSeconds} s`
              : `${+spec.capacity!.toFixed(1)} burst, ${+spec.refillPerSecond!.toFixed(2)}/s`) +
            ` (the limiter ended at ${learned?.toFixed(2) ?? "?"}/s)`
          : "none",
        armCallsPerService: +(calls.calls / bulk).toFixed(1),
        armWritesPerService: +(calls.writes / bulk).toFixed(2),
        throttledAnswers: state.throttled ?? 0,
        throttledByLimit: Object.fromEntries(
          Object.entries(state.limits ?? {})
            .filter(([, c]) => c.throttled > 0)
            .map(([l, c]) => [l, c.throttled]),
        ),
        throttlesSeenByPortico:
          total(after, "portico_cloud_throttles_total") - total(before, "portico_cloud_throttles_total"),
        waitedSeconds: {
          user: +(
            total(after, "portico_cloud_rate_limit_wait_seconds_total", /user/) -
            total(before, "portico_cloud_rate_limit_wait_seconds_total", /user/)
          ).toFixed(1),
          background: +(
            total(after, "portico_cloud_rate_limit_wait_seconds_total", /background/) -
            total(before, "portico_cloud_rate_limit_wait_seconds_total", /background/)
          ).toFixed(1),
        },
        waitedByBucket: waitedByBucket(before, after),
        controllerPeakRssMiB: Math.round(peak.rssBytes / 2 ** 20),
        controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
      },
    };
  } finally {
    await azure.clearThrottling();
    await controller.stop();
  }
}

/** The throttled phase's figures to set beside the unthrottled ones. */
export function throttledSummary(t: Awaited<ReturnType<typeof throttledPhase>>) {
  return {
    armCallsForNewService: t.newService.armCalls,
    armCallsPerConvergedService: t.bulk.armCallsPerService,
    secondsToConverge: t.bulk.seconds,
    floorSeconds: t.bulk.floorSeconds,
    timeOverFloor: t.bulk.timeOverFloor,
    bindingLimit: t.bulk.bindingLimit,
    throttledAnswers: t.newService.throttledAnswers + t.bulk.throttledAnswers,
    controllerPeakRssMiB: t.bulk.controllerPeakRssMiB,
  };
}
