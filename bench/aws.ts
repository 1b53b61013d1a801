// `make bench`, AWS part. Against the local environment (real apiserver + moto), with the controller running
// as its own process: cloud calls for one new Service, time and calls for N Services × M nodes to get their
// hostname (with the controller's memory and CPU), calls on a no-change resync, and endpoint churn latency.
import {
  DescribeTargetHealthCommand,
  DescribeTargetGroupsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { join } from "node:path";
import { TestAws } from "../test/harness/aws.ts";
import { ControllerProcess, total } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { percentile, report, sleep } from "./report.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const NODES = Number(process.env.BENCH_NODES ?? 100);
const CHURN = Number(process.env.BENCH_CHURN_SERVICES ?? 200);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const MUTATING = /operation="[a-z0-9]+:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke)/;

export async function benchAws(): Promise<Record<string, unknown>> {
  const env = await startEnvironment({ awsEndpoints: 1 });
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
    const controller = await ControllerProcess.start({
      kubeconfig: env.controlPlane.kubeconfig,
      args: [
        "--cluster-name",
        ns,
        "--namespace",
        ns,
        "--node-selector",
        cluster.nodeSelector,
        "--leader-elect=false",
        "--workers",
        String(WORKERS),
      ],
      logFile: join(env.dir, "controller.log"),
      env: { PORTICO_LOG_LEVEL: "warn" },
    });
    const calls = async (filter?: RegExp) =>
      total(await controller.metrics(), "portico_cloud_calls_total", filter);
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
    const withHostname = async () =>
      (await cluster.core.listNamespacedService({ namespace: ns })).items.filter(
        (s) => s.status?.loadBalancer?.ingress?.[0]?.hostname,
      ).length;
    const settle = async (want: number, by = controller) => {
      while ((await withHostname()) < want) await sleep(200);
      await by.waitQueueEmpty(600_000);
    };

    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
    progress("one Service");
    // One Service alone.
    let before = await calls();
    let beforeMutating = await calls(MUTATING);
    await cluster.core.createNamespacedService({ namespace: ns, body: svc("single") });
    await settle(1);
    const single = { calls: (await calls()) - before, mutating: (await calls(MUTATING)) - beforeMutating };

    progress(`${SERVICES} Services on ${NODES} nodes`);
    // N Services at once.
    before = await calls();
    beforeMutating = await calls(MUTATING);
    const cpuBefore = (await controller.usage()).cpuSeconds;
    let peakRss = 0;
    const sampler = setInterval(
      () =>
        void controller
          .usage()
          .then((u) => (peakRss = Math.max(peakRss, u.rssBytes)))
          .catch(() => undefined),
      250,
    );
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
    clearInterval(sampler);
    const bulk = {
      services: SERVICES,
      nodes: NODES,
      seconds: +seconds.toFixed(1),
      servicesPerSecond: +(SERVICES / seconds).toFixed(1),
      callsPerService: +(((await calls()) - before) / SERVICES).toFixed(1),
      mutatingPerService: +(((await calls(MUTATING)) - beforeMutating) / SERVICES).toFixed(1),
      controllerPeakRssMiB: Math.round(peakRss / 2 ** 20),
      controllerCpuSeconds: +((await controller.usage()).cpuSeconds - cpuBefore).toFixed(1),
    };

    progress("a no-change resync");
    // A resync of everything with nothing changed: the controller's periodic look, forced now by a restart
    // of its informers' view (every Service is enqueued on start).
    await controller.stop();
    const resyncer = await ControllerProcess.start({
      kubeconfig: env.controlPlane.kubeconfig,
      args: [
        "--cluster-name",
        ns,
        "--namespace",
        ns,
        "--node-selector",
        cluster.nodeSelector,
        "--leader-elect=false",
        "--workers",
        String(WORKERS),
        "--orphan-collection-period",
        "3600",
      ],
      logFile: join(env.dir, "controller-resync.log"),
      env: { PORTICO_LOG_LEVEL: "warn" },
    });
    const resyncStarted = performance.now();
    await sleep(500);
    await resyncer.waitQueueEmpty(600_000);
    const resyncMetrics = await resyncer.metrics();
    const resync = {
      services: SERVICES + 1,
      seconds: +((performance.now() - resyncStarted) / 1000).toFixed(1),
      callsPerService: +(
        total(resyncMetrics, "portico_cloud_calls_total", /operation="(elbv2|ec2|tagging):/) /
        (SERVICES + 1)
      ).toFixed(1),
      mutatingCalls: total(resyncMetrics, "portico_cloud_calls_total", MUTATING),
      orphanCollectionCalls:
        total(resyncMetrics, "portico_cloud_calls_total", /GetResources|DescribeSecurityGroups/) > 0
          ? "included"
          : "none",
    };

    progress(`endpoint churn on ${CHURN} ip-target Services`);
    // Churn: ip-target Services whose endpoints flap; time from an endpoint turning ready to its registration.
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
    await settle(SERVICES + 1 + CHURN, resyncer);
    progress("flapping");
    const arnOf = new Map<string, string>();
    for (const tg of (await aws.elbv2.send(new DescribeTargetGroupsCommand({ PageSize: 400 })))
      .TargetGroups ?? [])
      arnOf.set(tg.TargetGroupName!, tg.TargetGroupArn!);
    const churnCallsBefore = total(await resyncer.metrics(), "portico_cloud_calls_total");
    const readyAt = new Map<string, number>();
    const latencies: number[] = [];
    for (const n of churnNames) {
      await cluster.discovery.patchNamespacedEndpointSlice(
        {
          name: `${n}-slice`,
          namespace: ns,
          body: {
            endpoints: [
              { addresses: ["10.0.0.200"], conditions: { ready: true } },
              { addresses: ["10.0.0.201"], conditions: { ready: true } },
            ],
          },
        },
        (await import("../test/harness/kube.ts")).mergePatch,
      );
      readyAt.set(n, performance.now());
    }
    const pending = new Set(churnNames);
    const tgArns = await targetGroupsFor(aws, churnNames);
    const churnDeadline = performance.now() + 300_000;
    while (pending.size) {
      if (performance.now() > churnDeadline)
        throw new Error(
          `${pending.size} endpoints were never registered: ${[...pending].slice(0, 5).join(", ")}`,
        );
      await Promise.all(
        [...pending].map(async (n) => {
          const health = await aws.elbv2.send(
            new DescribeTargetHealthCommand({ TargetGroupArn: tgArns.get(n) }),
          );
          if (health.TargetHealthDescriptions?.some((d) => d.Target?.Id === "10.0.0.201")) {
            latencies.push(performance.now() - readyAt.get(n)!);
            pending.delete(n);
          }
        }),
      );
      await sleep(100);
    }
    await resyncer.waitQueueEmpty();
    const churn = {
      services: CHURN,
      p50Ms: Math.round(percentile(latencies, 50)),
      p99Ms: Math.round(percentile(latencies, 99)),
      callsPerChange: +(
        (total(await resyncer.metrics(), "portico_cloud_calls_total") - churnCallsBefore) /
        CHURN
      ).toFixed(1),
      pollIntervalMs: 100,
    };
    await resyncer.stop();
    return {
      emulator: env.awsEndpoints[0]!.kind,
      workers: WORKERS,
      newService: single,
      bulk,
      noChangeResync: resync,
      endpointChurn: churn,
    };
  } finally {
    await env.stop();
  }
}

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
