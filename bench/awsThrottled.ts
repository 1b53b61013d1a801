// `make bench-aws`, its last phase (on unless BENCH_THROTTLE=0): new Services under AWS's request throttling, emulated
// (test/harness/awsThrottle.ts), with Portico's rate limiter on.
import { randomUUID } from "node:crypto";
import { TAG } from "../providers/aws/names.ts";
import { TestAws } from "../test/harness/aws.ts";
import { total, type ControllerProcess } from "../test/harness/controllerProcess.ts";
import { startFaultProxy } from "../test/harness/faultProxy.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { sleep } from "./report.ts";
import { answerSecondsByAction, byAction, sum, waitedByBucket } from "./calls.ts";
import { sampleUsage } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const THROTTLE_SERVICES = Number(process.env.BENCH_THROTTLE_SERVICES ?? SERVICES);
// The share of every bucket left to "the rest of the account" (0: Portico has the whole account).
const THROTTLE_RESERVE = Number(process.env.BENCH_THROTTLE_RESERVE ?? 0);
// Security groups of another cluster the emulator holds before the phase starts (0: none), tagged as Portico tags
// its own: to see what the emulator's tag-filtered reads cost when it is not empty.
const FOREIGN_GROUPS = Number(process.env.BENCH_THROTTLE_FOREIGN_GROUPS ?? 0);

/**
 * N new Services on a second cluster (its own namespace, nodes and cluster name) under AWS's request throttling,
 * emulated with AWS's figures, less the reserve left to the rest of the account; the controller runs with its rate
 * limiter on. The phase has an emulator of its own, empty: moto answers a tag-filtered DescribeSecurityGroups by
 * matching every group against every tag of the region (1.2 s a call at 500 groups, 6 s at 1250, measured), so
 * behind the earlier phases' thousand Services its own slowness, not the buckets, would bound the phase (real EC2
 * indexes tags). The buckets' floor is the least time the calls made could take from full buckets (per bucket,
 * calls beyond the burst over the refill rate; the slowest bucket's), so the ratio says how close to the
 * account's limits Portico ran.
 */
export async function throttledPhase(p: {
  kubeconfig: string;
  /** The emulator the phase has to itself (reset here). */
  emulatorUrl: string;
  nodes: number;
  start: (log: string, on: TestCluster, awsEndpointUrl: string) => Promise<ControllerProcess>;
  svc: (name: string) => object;
  progress: (what: string) => void;
}): Promise<Record<string, unknown>> {
  const aws = await TestAws.fresh(p.emulatorUrl);
  // Throttling from the start: the benchmark's own set-up below talks to the emulator directly, not through it.
  const proxy = await startFaultProxy(p.emulatorUrl, { throttle: { reserve: THROTTLE_RESERVE } });
  const cluster = await TestCluster.create(p.kubeconfig, "throttled");
  const ns = cluster.namespace;
  const network = await aws.createNetwork(ns, { internal: true });
  const instances = await aws.createInstances(network.subnets[0]!.subnetId, p.nodes);
  for (let i = 0; i < FOREIGN_GROUPS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, FOREIGN_GROUPS - i) }, (_, k) =>
        aws.createSecurityGroup(network.vpcId, `other-${i + k}`, {
          "kubernetes.io/cluster/other": "owned",
          [TAG.cluster]: "other",
          [TAG.service]: `default/s${i + k}`,
          [TAG.serviceUid]: randomUUID(),
        }),
      ),
    );
  for (const [i, inst] of instances.entries())
    await cluster.createNode(`n${i}`, { providerID: inst.providerID, internalIP: inst.privateIp });
  const throttle = proxy.throttle!;
  const controller = await p.start("controller-throttled.log", cluster, proxy.url);
  try {
    await sleep(2000);
    await controller.waitQueueEmpty(600_000);
    // The start-up work (the first orphan collection reads the cluster's resources) is over: no call for 5 s.
    const calls = async () => total(await controller.metrics(), "portico_cloud_calls_total");
    for (let last = await calls(); ;) {
      await sleep(5000);
      const now = await calls();
      if (now === last) break;
      last = now;
    }
    const usage = sampleUsage(controller);
    // One Service first, alone: what a new Service costs under the buckets (the controller is as cold as it is
    // at the start of the unthrottled phases).
    p.progress("one Service under AWS's throttling");
    const beforeFirst = await controller.metrics();
    const throttledBeforeFirst = throttle.throttled();
    await cluster.core.createNamespacedService({ namespace: ns, body: p.svc("t-first") });
    while (!(await cluster.getService("t-first")).status?.loadBalancer?.ingress?.[0]?.hostname)
      await sleep(200);
    await controller.waitQueueEmpty(600_000);
    const firstByAction = byAction(beforeFirst, await controller.metrics());
    const newService = {
      calls: sum(firstByAction),
      throttledAnswers: throttle.throttled() - throttledBeforeFirst,
      byAction: firstByAction,
    };
    p.progress(`${THROTTLE_SERVICES} Services under AWS's throttling (reserve ${THROTTLE_RESERVE})`);
    const before = await controller.metrics();
    throttle.reset();
    const started = performance.now();
    for (let i = 0; i < THROTTLE_SERVICES; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, THROTTLE_SERVICES - i) }, (_, k) =>
          cluster.core.createNamespacedService({ namespace: ns, body: p.svc(`t${i + k}`) }),
        ),
      );
    // When half and nine tenths of the Services had their hostname: a long tail after those is not the
    // buckets' doing (every Service makes the same calls).
    const reached = new Map<number, number>();
    for (;;) {
      const items = (await cluster.core.listNamespacedService({ namespace: ns })).items;
      const done = items.filter((s) => s.status?.loadBalancer?.ingress?.[0]?.hostname).length;
      for (const share of [0.5, 0.9])
        if (done - 1 >= share * THROTTLE_SERVICES && !reached.has(share))
          reached.set(share, +((performance.now() - started) / 1000).toFixed(1));
      if (done - 1 >= THROTTLE_SERVICES) break;
      await sleep(500);
    }
    // Converged when every Service has its hostname: the floor is that of the calls made until then. The
    // queue empties later (Services whose targets are not yet healthy are looked at again with backoff).
    const seconds = (performance.now() - started) / 1000;
    const floor = throttle.floor();
    const admitted = [...throttle.counts.values()].reduce((n, c) => n + c.admitted, 0);
    const queueEmpty = await controller.waitQueueEmpty(300_000).then(
      () => +((performance.now() - started) / 1000).toFixed(1),
      () => "not within 300 s of the last hostname",
    );
    const after = await controller.metrics();
    const { rssBytes, cpuSeconds } = await usage.stop();
    const binding = floor.bucket ? throttle.counts.get(floor.bucket) : undefined;
    const learned = [...after].find(([k]) =>
      k.startsWith(`portico_cloud_rate_limit_per_second{bucket="${floor.bucket}"`),
    )?.[1];
    return {
      newService,
      services: THROTTLE_SERVICES,
      reserve: THROTTLE_RESERVE,
      seconds: +seconds.toFixed(1),
      secondsToHalf: reached.get(0.5),
      secondsToNineTenths: reached.get(0.9),
      secondsToEmptyQueue: queueEmpty,
      floorSeconds: +floor.seconds.toFixed(1),
      timeOverFloor: floor.seconds > 0 ? +(seconds / floor.seconds).toFixed(2) : "no bucket binds",
      bindingBucket: binding
        ? `${floor.bucket}: ${binding.admitted} calls, ${+binding.spec.capacity.toFixed(1)} burst, ` +
          `${+binding.spec.refillPerSecond.toFixed(2)}/s (the limiter ended at ${learned?.toFixed(2) ?? "?"}/s)`
        : "none",
      callsPerService: +(admitted / THROTTLE_SERVICES).toFixed(1),
      throttledAnswers: throttle.throttled(),
      throttledByBucket: Object.fromEntries(
        [...throttle.counts].filter(([, c]) => c.throttled > 0).map(([b, c]) => [b, c.throttled]),
      ),
      throttlesSeenByPortico:
        total(after, "portico_cloud_throttles_total") - total(before, "portico_cloud_throttles_total"),
      controllerPeakRssMiB: Math.round(rssBytes / 2 ** 20),
      controllerCpuSeconds: +cpuSeconds.toFixed(1),
      byAction: byAction(before, after),
      waitedSeconds: {
        user: +total(after, "portico_cloud_rate_limit_wait_seconds_total", /user/).toFixed(1),
        background: +total(after, "portico_cloud_rate_limit_wait_seconds_total", /background/).toFixed(1),
      },
      waitedByBucket: waitedByBucket(before, after),
      // Time the emulator took to answer, beside the time spent waiting for the limiter: what else holds the
      // controller's workers when the binding bucket is not kept busy.
      answerSecondsByAction: answerSecondsByAction(before, after),
      emulator: FOREIGN_GROUPS
        ? `its own, holding ${FOREIGN_GROUPS} security groups of another cluster at the start of the phase`
        : "its own, empty at the start of the phase",
    };
  } finally {
    await controller.stop();
    await proxy.close();
  }
}
