// `make bench`, AWS part. Against the local environment (real apiserver + moto), with the controller running
// as its own process: cloud calls (by action) for the first new Service and for one on a warm controller, time
// and calls for N Services × M nodes to get their hostname (with the controller's memory and CPU), calls on the
// pass after a restart and on a periodic no-change resync, and endpoint churn latency.
// These phases run against an emulator that never throttles, with Portico's own rate limiter off, so their
// figures compare with earlier runs. A last phase runs the same new Services under AWS's request throttling,
// emulated (test/harness/awsThrottle.ts), with the rate limiter on (bench/awsThrottled.ts), so that both sets of
// figures come from one run; BENCH_THROTTLE=0 leaves it out, BENCH_THROTTLE=only runs it alone.
import { DescribeTargetGroupsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { join } from "node:path";
import { TestAws } from "../test/harness/aws.ts";
import { ControllerProcess, total, scopedTo } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { throttledPhase } from "./awsThrottled.ts";
import { buildController } from "./build.ts";
import { startFaultProxy } from "../test/harness/faultProxy.ts";
import { mergePatch, TestCluster } from "../test/harness/kube.ts";
import { percentile, report, sleep } from "./report.ts";
import { sampleUsage } from "./usage.ts";
import { answerSecondsByAction, byAction, sum } from "./calls.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const NODES = Number(process.env.BENCH_NODES ?? 100);
const CHURN = Number(process.env.BENCH_CHURN_SERVICES ?? 200);
const CHURN_ROUNDS = Number(process.env.BENCH_CHURN_ROUNDS ?? 3);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const MUTATING =
  /operation="[a-z0-9]+:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;
const MUTATING_ACTION =
  /^[a-z0-9]+:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;
const THROTTLE = process.env.BENCH_THROTTLE !== "0";

export async function benchAws(): Promise<Record<string, unknown>> {
  // The throttled phase has an emulator of its own (bench/awsThrottled.ts says why).
  const only = process.env.BENCH_THROTTLE === "only";
  const env = await startEnvironment({ awsEndpoints: THROTTLE && !only ? 2 : 1 });
  // The controller reaches the emulator through a recording proxy (no faults), the benchmark directly.
  const proxy = await startFaultProxy(env.awsEndpoints[0]!.url);
  let answers: (action: string, body: string, status: number) => void = () => undefined;
  proxy.onAnswer((action, body, status) => answers(action, body, status));
  try {
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: env.awsEndpoints[0]!.url,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "bench",
      AWS_SECRET_ACCESS_KEY: "bench",
    });
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const ns = cluster.namespace;
    const aws = await TestAws.fresh();
    const network = await aws.createNetwork(ns, { internal: true });
    const instances = await aws.createInstances(network.subnets[0]!.subnetId, NODES);
    for (const [i, inst] of instances.entries())
      await cluster.createNode(`n${i}`, { providerID: inst.providerID, internalIP: inst.privateIp });
    // The controller as the image runs it (bundled), unless BENCH_FROM_SOURCES=1 runs the TypeScript sources.
    const main = process.env.BENCH_FROM_SOURCES === "1" ? undefined : await buildController("bench-aws");
    const start = (
      log: string,
      extraArgs: string[] = [],
      on = cluster,
      rateLimit = "off",
      awsEndpointUrl = proxy.url,
    ) =>
      ControllerProcess.start({
        kubeconfig: env.controlPlane.kubeconfig,
        args: [...scopedTo(on), "--leader-elect=false", "--workers", String(WORKERS), ...extraArgs],
        logFile: join(env.dir, log),
        ...(main ? { main } : {}),
        env: {
          PORTICO_LOG_LEVEL: "warn",
          AWS_ENDPOINT_URL: awsEndpointUrl,
          PORTICO_AWS_RATE_LIMIT: rateLimit,
        },
      });
    const svc = (name: string, ip = false) => ({
      metadata: {
        name,
        ...(ip
          ? { annotations: { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" } }
          : {}),
      },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: "portico.io/aws-nlb",
        selector: { app: name },
        ports: [{ name: "http", port: 80, targetPort: 8080 }],
      },
    });
    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
    const throttledPhaseHere = () =>
      throttledPhase({
        kubeconfig: env.controlPlane.kubeconfig,
        emulatorUrl: env.awsEndpoints.at(-1)!.url,
        nodes: NODES,
        start: (log, on, awsEndpointUrl) => start(log, [], on, "on", awsEndpointUrl),
        svc,
        progress,
      });
    // BENCH_THROTTLE=only: the throttled phase alone, for trying the rate limiter out.
    if (only) return { throttled: await throttledPhaseHere() };
    const controller = await start("controller.log");
    const calls = async (filter?: RegExp) =>
      total(await controller.metrics(), "portico_cloud_calls_total", filter);
    const withHostname = async () =>
      (await cluster.core.listNamespacedService({ namespace: ns })).items.filter(
        (s) => s.status?.loadBalancer?.ingress?.[0]?.hostname,
      ).length;
    const settle = async (want: number, by = controller) => {
      while ((await withHostname()) < want) await sleep(200);
      await by.waitQueueEmpty(600_000);
    };

    // Quiet: no call for five seconds (at most two minutes), so the looks that follow a change (a new Service
    // is looked at again until its targets pass their first health checks) count with it, and nothing else does.
    const quiet = async (by = controller) => {
      const until = performance.now() + 120_000;
      let last = -1;
      for (;;) {
        const now = total(await by.metrics(), "portico_cloud_calls_total");
        if (now === last || performance.now() > until) return;
        last = now;
        await sleep(5000);
      }
    };

    progress("one Service");
    // One Service alone, the first the controller serves: it pays for what every later Service shares. Measured
    // once the controller's start-up work (its first orphan collection, which reads the cluster's resources) is
    // over, so that it counts what the Service costs, not what starting did.
    await quiet();
    const beforeMetrics = await controller.metrics();
    let before = await calls();
    let beforeMutating = await calls(MUTATING);
    await cluster.core.createNamespacedService({ namespace: ns, body: svc("single") });
    await settle(1);
    await quiet();
    const single = { calls: (await calls()) - before, mutating: (await calls(MUTATING)) - beforeMutating };
    const singleByAction = byAction(beforeMetrics, await controller.metrics());

    progress(`${SERVICES} Services on ${NODES} nodes`);
    // N Services at once.
    const beforeBulk = await controller.metrics();
    before = total(beforeBulk, "portico_cloud_calls_total");
    beforeMutating = total(beforeBulk, "portico_cloud_calls_total", MUTATING);
    const usage = sampleUsage(controller);
    const started = performance.now();
    for (let i = 0; i < SERVICES; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, SERVICES - i) }, (_, k) =>
          cluster.core.createNamespacedService({ namespace: ns, body: svc(`s${i + k}`) }),
        ),
      );
    }
    await settle(SERVICES + 1);
    const seconds = (performance.now() - started) / 1000;
    const peak = await usage.stop();
    await quiet();
    const bulk = {
      services: SERVICES,
      nodes: NODES,
      seconds: +seconds.toFixed(1),
      servicesPerSecond: +(SERVICES / seconds).toFixed(1),
      callsPerService: +(((await calls()) - before) / SERVICES).toFixed(1),
      mutatingPerService: +(((await calls(MUTATING)) - beforeMutating) / SERVICES).toFixed(1),
      controllerPeakRssMiB: Math.round(peak.rssBytes / 2 ** 20),
      controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
      // The emulator's answer time: unthrottled, it is what bounds how fast Services converge.
      answerSecondsByAction: answerSecondsByAction(beforeBulk, await controller.metrics()),
    };

    progress("one more Service on the warm controller");
    await quiet();
    const beforeWarm = await controller.metrics();
    await cluster.core.createNamespacedService({ namespace: ns, body: svc("warm") });
    await settle(SERVICES + 2);
    await quiet();
    const warmByAction = byAction(beforeWarm, await controller.metrics());
    const warm = {
      calls: sum(warmByAction),
      mutating: sum(warmByAction, MUTATING_ACTION),
      byAction: warmByAction,
    };

    progress("a no-change resync after a restart");
    // A restarted controller (or a new leader) knows nothing: it looks at every Service afresh. Its periodic
    // resync comes `period` seconds after its start, once the restart pass is long done (it makes about half the
    // calls creating them all did, and no write), and is measured apart: that is the look every resync period costs.
    await controller.stop();
    const period = Math.max(120, Math.ceil(bulk.seconds * 2.5));
    // Each Service's full observation (what no listing shows: listeners, attributes) comes again once it is older
    // than the full-observation period: set here between one and two resync periods, so that the first periodic
    // resync reads targets alone and the second observes every Service in full, as each hourly one does.
    const fullPeriod = Math.ceil(period * 1.2);
    const resyncer = await start("controller-resync.log", [
      "--orphan-collection-period",
      "3600",
      "--resync-period",
      String(period),
      "--aws-full-observation-period",
      String(fullPeriod),
    ]);
    const resyncStarted = performance.now();
    await sleep(500);
    await resyncer.waitQueueEmpty(600_000);
    const restartMetrics = await resyncer.metrics();
    const restartSeconds = (performance.now() - resyncStarted) / 1000;
    if (restartSeconds > 2 * period - fullPeriod - 5)
      throw new Error(
        `the restart pass took ${restartSeconds.toFixed(0)} s: its observations would not all be due for the ` +
          `full one at the second resync (${period} s period, full observation past ${fullPeriod} s)`,
      );
    const restartByAction = byAction(new Map(), restartMetrics);
    const restart = {
      services: SERVICES + 2,
      seconds: +restartSeconds.toFixed(1),
      callsPerService: +(sum(restartByAction) / (SERVICES + 2)).toFixed(2),
      mutatingCalls: sum(restartByAction, MUTATING_ACTION),
      byAction: restartByAction,
    };
    // The resync due `at` seconds after the restart: the calls it made, from the metrics read before it.
    const resyncAt = async (at: number, before: Map<string, number>) => {
      while ((performance.now() - resyncStarted) / 1000 < at + 1) await sleep(500);
      const started = performance.now();
      await sleep(500);
      await resyncer.waitQueueEmpty(600_000);
      const metrics = await resyncer.metrics();
      const calls = byAction(before, metrics);
      return {
        metrics,
        figures: {
          services: SERVICES + 2,
          seconds: +((performance.now() - started) / 1000 + 1).toFixed(1),
          callsPerService: +(sum(calls) / (SERVICES + 2)).toFixed(2),
          mutatingCalls: sum(calls, MUTATING_ACTION),
          byAction: calls,
        },
      };
    };
    progress(`the periodic no-change resync (${period} s after the restart)`);
    const periodic = await resyncAt(period, restartMetrics);
    const resync = periodic.figures;
    progress(`the next resync, which observes every Service in full (${2 * period} s after the restart)`);
    const full = (await resyncAt(2 * period, periodic.metrics)).figures;
    const fullResync = {
      ...full,
      // Over an hour at the defaults (resync every 600 s, full observation hourly): five resyncs like the one
      // above and one like this, per Service. Computed from the two measured passes.
      averagedOverAnHourAtTheDefaults: +((5 * resync.callsPerService + full.callsPerService) / 6).toFixed(2),
    };
    await resyncer.stop();
    // Churn on a controller that resyncs only hourly, so that no resync counts among the changes' calls.
    const churner = await start("controller-churn.log", ["--orphan-collection-period", "3600"]);
    await sleep(500);
    await churner.waitQueueEmpty(600_000);

    progress(`endpoint churn on ${CHURN} ip-target Services`);
    // Churn: ip-target Services whose endpoints flap, round after round; time from an endpoint changing in its
    // EndpointSlice to the emulator's answer to the RegisterTargets/DeregisterTargets call that follows it, as
    // seen by the recording proxy the controller talks through (so the benchmark puts no load of its own on
    // the emulator). The first round follows the creation and observes everything; later rounds reuse that.
    const churnNames = Array.from({ length: CHURN }, (_, i) => `churn-${i}`);
    for (const n of churnNames)
      await cluster.createEndpointSlice(
        n,
        [{ ip: "10.0.0.200" }],
        [{ name: "http", port: 8080 }],
        `${n}-slice`,
      );
    for (let i = 0; i < CHURN; i += 50)
      await Promise.all(
        churnNames
          .slice(i, i + 50)
          .map((n) => cluster.core.createNamespacedService({ namespace: ns, body: svc(n, true) })),
      );
    progress("waiting for the churn Services to converge");
    await settle(SERVICES + 2 + CHURN, churner);
    const serviceOf = new Map([...(await targetGroupsFor(aws, churnNames))].map(([svc, arn]) => [arn, svc]));
    const rounds = [];
    for (let round = 1; round <= CHURN_ROUNDS; round++) {
      progress(`flapping, round ${round} of ${CHURN_ROUNDS}`);
      const action = round % 2 ? "RegisterTargets" : "DeregisterTargets";
      const endpoints = round % 2 ? ["10.0.0.200", "10.0.0.201"] : ["10.0.0.200"];
      const changedAt = new Map<string, number>();
      const doneAt = new Map<string, number>();
      answers = (answered, body, status) => {
        if (answered !== action || status !== 200) return;
        const form = new URLSearchParams(body);
        const svcName = serviceOf.get(form.get("TargetGroupArn") ?? "");
        if (svcName && form.get("Targets.member.1.Id") === "10.0.0.201" && !doneAt.has(svcName))
          doneAt.set(svcName, performance.now());
      };
      const metricsBefore = await churner.metrics();
      const callsBefore = total(metricsBefore, "portico_cloud_calls_total");
      for (const n of churnNames) {
        await cluster.discovery.patchNamespacedEndpointSlice(
          {
            name: `${n}-slice`,
            namespace: ns,
            body: { endpoints: endpoints.map((ip) => ({ addresses: [ip], conditions: { ready: true } })) },
          },
          mergePatch,
        );
        changedAt.set(n, performance.now());
      }
      const deadline = performance.now() + 600_000;
      while (doneAt.size < CHURN) {
        if (performance.now() > deadline)
          throw new Error(`round ${round}: ${CHURN - doneAt.size} of ${CHURN} target changes never made`);
        await sleep(50);
      }
      await churner.waitQueueEmpty(600_000);
      const metricsAfter = await churner.metrics();
      const latencies = churnNames.map((n) => doneAt.get(n)! - changedAt.get(n)!);
      const answered = answerSecondsByAction(metricsBefore, metricsAfter);
      rounds.push({
        round,
        change: action,
        observation: round === 1 ? "first change after creation (known from its writes)" : "reused",
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        callsPerChange: +((total(metricsAfter, "portico_cloud_calls_total") - callsBefore) / CHURN).toFixed(
          1,
        ),
        // The emulator's own time: its answers to every call of the round, per change (calls overlap, so this
        // is what a change's calls took at most, not time added to each change).
        emulatorMsPerChange: Math.round((1000 * Object.values(answered).reduce((n, t) => n + t, 0)) / CHURN),
        // Where the round's time went at the emulator: the three actions it took longest to answer.
        slowestAnswers: Object.entries(answered)
          .slice(0, 3)
          .map(([action, seconds]) => `${action} ${seconds} s`)
          .join(", "),
      });
    }
    answers = () => undefined;
    const churn = { services: CHURN, rounds };
    await churner.stop();
    const throttled = THROTTLE ? await throttledPhaseHere() : "not run (BENCH_THROTTLE=0)";
    return {
      emulator: env.awsEndpoints[0]!.kind,
      controllerRunFrom: main ? "JavaScript, compiled and bundled as the image's" : "TypeScript sources",
      workers: WORKERS,
      rateLimiter: "off in the phases above, on in the throttled one",
      newService: { ...single, byAction: singleByAction, note: "the first the controller serves" },
      newServiceWarm: warm,
      bulk,
      noChangeResync: resync,
      noChangeResyncWithFullObservation: fullResync,
      restartResync: restart,
      endpointChurn: churn,
      throttled,
    };
  } finally {
    await proxy.close();
    await env.stop();
  }
}

/** Cloud calls between two scrapes, by operation (errors and retries included: the account sees them all). */
async function targetGroupsFor(aws: TestAws, services: string[]): Promise<Map<string, string>> {
  const byService = new Map<string, string>();
  let marker: string | undefined;
  const all = [];
  do {
    const page = await aws.elbv2.send(
      new DescribeTargetGroupsCommand({ PageSize: 400, ...(marker ? { Marker: marker } : {}) }),
    );
    all.push(...(page.TargetGroups ?? []));
    marker = page.NextMarker;
  } while (marker);
  const { DescribeTagsCommand } = await import("@aws-sdk/client-elastic-load-balancing-v2");
  for (let i = 0; i < all.length; i += 20) {
    const tags = await aws.elbv2.send(
      new DescribeTagsCommand({ ResourceArns: all.slice(i, i + 20).map((t) => t.TargetGroupArn!) }),
    );
    for (const d of tags.TagDescriptions ?? []) {
      const svc = d.Tags?.find((t) => t.Key === "portico.io/service")?.Value?.split("/")[1];
      if (svc && services.includes(svc)) byService.set(svc, d.ResourceArn!);
    }
  }
  return byService;
}

if (import.meta.main) await report("aws", benchAws);
