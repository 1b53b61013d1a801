// `make bench-metal`. Against the local environment (real apiserver), with the controller running as its own
// process: time for N bare-metal Services to get an address from IPAddressPools (with the controller's memory
// and CPU), a no-change resync (a restart, which reads every allocation back from the Services' status), and
// whether any address was given out twice.
import { CustomObjectsApi, type V1Service } from "@kubernetes/client-node";
import { join } from "node:path";
import { ControllerProcess, total } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { createPool, installPoolCrd } from "../test/harness/pools.ts";
import { buildController } from "./build.ts";
import { percentile, report, sleep } from "./report.ts";
import { sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const POOLS = Number(process.env.BENCH_POOLS ?? 5);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const METAL = "portico.io/metal";
/** Each pool's range starts on its own /22 of 198.18.0.0/15, the block set aside for benchmarks (RFC 2544). */
const POOL_SPAN = 1024;
const BASE = 198 * 2 ** 24 + 18 * 2 ** 16;
const POLL_MS = 500;
/** Far beyond what any size should need: a run that gets stuck says so instead of hanging. */
const DEADLINE_MS = 30 * 60_000;

export async function benchMetal(): Promise<Record<string, unknown>> {
  // Together the pools hold exactly one address per Service, so the last ones fill them up.
  const poolSize = Math.ceil(SERVICES / POOLS);
  if (poolSize > POOL_SPAN - 2)
    throw new Error(`${SERVICES} Services over ${POOLS} pools: at most ${POOL_SPAN - 2} per pool`);
  const env = await startEnvironment({ awsEndpoints: 0 });
  try {
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const ns = cluster.namespace;
    await installPoolCrd(cluster);
    const pools = [];
    for (let i = 0; i < POOLS; i++) {
      const first = ipv4(BASE + i * POOL_SPAN + 1);
      const last = ipv4(BASE + i * POOL_SPAN + poolSize);
      pools.push({ ...(await createPool(cluster, `p${i}`, { addresses: [`${first}-${last}`] })), first });
    }
    // The controller as the image runs it (bundled), unless BENCH_FROM_SOURCES=1 runs the TypeScript sources.
    const main = process.env.BENCH_FROM_SOURCES === "1" ? undefined : await buildController("bench-metal");
    const start = (log: string) =>
      ControllerProcess.start({
        ...(main ? { main } : {}),
        kubeconfig: env.controlPlane.kubeconfig,
        args: [
          "--provider",
          "metal",
          "--load-balancer-class",
          METAL,
          "--cluster-name",
          ns,
          "--namespace",
          ns,
          "--leader-elect=false",
          "--workers",
          String(WORKERS),
          // No periodic resync during a run: the restart below measures what one costs.
          "--resync-period",
          "3600",
        ],
        logFile: join(env.dir, log),
        env: { PORTICO_LOG_LEVEL: "warn" },
      });
    const controller = await start("controller.log");
    const list = async () => (await cluster.core.listNamespacedService({ namespace: ns })).items;
    const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const poolVersions = async () =>
      new Map(
        (
          (await custom.listClusterCustomObject({
            group: "portico.io",
            version: "v1alpha1",
            plural: "ipaddresspools",
          })) as { items: { metadata: { name: string; resourceVersion: string } }[] }
        ).items.map((p) => [p.metadata.name, p.metadata.resourceVersion]),
      );
    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);

    progress(`${SERVICES} Services over ${POOLS} pools`);
    const createdAt = new Map<string, number>();
    const addressSince = new Map<string, number>();
    const watch = async () => {
      const deadline = performance.now() + DEADLINE_MS;
      for (;;) {
        const now = performance.now();
        for (const s of await list())
          if (s.status?.loadBalancer?.ingress?.[0]?.ip && !addressSince.has(s.metadata!.name!))
            addressSince.set(s.metadata!.name!, now);
        if (addressSince.size >= SERVICES) return;
        if (now > deadline)
          throw new Error(`only ${addressSince.size} of ${SERVICES} Services got an address in 30 minutes`);
        await sleep(POLL_MS);
      }
    };
    const usage = sampleUsage(controller);
    const started = performance.now();
    // Watched from the first create on, so each Service's own time to its address is seen.
    const allAddressed = watch();
    for (let i = 0; i < SERVICES; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, SERVICES - i) }, async (_, k) => {
          const name = `s${i + k}`;
          await cluster.core.createNamespacedService({
            namespace: ns,
            body: {
              metadata: { name },
              spec: {
                type: "LoadBalancer",
                loadBalancerClass: METAL,
                selector: { app: name },
                ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
              },
            },
          });
          createdAt.set(name, performance.now());
        }),
      );
    const createSeconds = (performance.now() - started) / 1000;
    await allAddressed;
    const seconds = (Math.max(...addressSince.values()) - started) / 1000;
    const lastChange = await settled(controller);
    const peak = await usage.stop();
    const latencies = [...createdAt].map(([name, at]) => addressSince.get(name)! - at);
    const before = await list();
    const poolStatus = await Promise.all(pools.map((p) => p.status()));
    const bulk = {
      services: SERVICES,
      pools: POOLS,
      addressesPerPool: poolSize,
      seconds: +seconds.toFixed(1),
      servicesPerSecond: +(SERVICES / seconds).toFixed(1),
      createSeconds: +createSeconds.toFixed(1),
      settledSeconds: +((lastChange - started) / 1000).toFixed(1),
      timeToAddressP50Seconds: +(percentile(latencies, 50) / 1000).toFixed(1),
      timeToAddressP99Seconds: +(percentile(latencies, 99) / 1000).toFixed(1),
      reconciles: total(await controller.metrics(), "portico_reconciles_total"),
      controllerPeakRssMiB: Math.round(peak.rssBytes / 2 ** 20),
      controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
      ...addresses(before, pools),
      poolStatusAssignedIPv4: poolStatus.map((s) => Number(s?.assignedIPv4 ?? 0)),
    };

    progress("a no-change resync (controller restart)");
    await controller.stop();
    const poolsBefore = await poolVersions();
    // Timed from the process's start: a restart's cost includes listing everything before reconciling.
    const resyncStarted = performance.now();
    const resyncer = await start("controller-resync.log");
    const resyncUsage = sampleUsage(resyncer, true);
    while (total(await resyncer.metrics(), "portico_reconciles_total") < SERVICES) {
      if (performance.now() - resyncStarted > DEADLINE_MS)
        throw new Error("the restarted controller did not reconcile every Service in 30 minutes");
      await sleep(100);
    }
    const resyncSeconds = (performance.now() - resyncStarted) / 1000;
    const resyncSettled = await settled(resyncer);
    const resyncPeak = await resyncUsage.stop();
    const after = await list();
    const poolsAfter = await poolVersions();
    const versionBefore = new Map(before.map((s) => [s.metadata!.name!, s.metadata!.resourceVersion]));
    const addressBefore = new Map(before.map((s) => [s.metadata!.name!, ingressOf(s)]));
    const resync = {
      services: SERVICES,
      seconds: +resyncSeconds.toFixed(1),
      settledSeconds: +((resyncSettled - resyncStarted) / 1000).toFixed(1),
      reconciles: total(await resyncer.metrics(), "portico_reconciles_total"),
      servicesWritten: after.filter(
        (s) => versionBefore.get(s.metadata!.name!) !== s.metadata!.resourceVersion,
      ).length,
      poolsWritten: [...poolsAfter].filter(
        ([name, v]) => poolsBefore.has(name) && poolsBefore.get(name) !== v,
      ).length,
      addressesChanged: after.filter((s) => addressBefore.get(s.metadata!.name!) !== ingressOf(s)).length,
      duplicateAddresses: addresses(after, pools).duplicateAddresses,
      controllerPeakRssMiB: Math.round(resyncPeak.rssBytes / 2 ** 20),
      controllerCpuSecondsSinceStart: +resyncPeak.cpuSeconds.toFixed(1),
    };
    await resyncer.stop();
    return {
      controllerRunFrom: main ? "JavaScript, compiled and bundled as the image's" : "TypeScript sources",
      workers: WORKERS,
      bulk,
      noChangeResync: resync,
    };
  } finally {
    await env.stop();
  }
}

const ipv4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
const toNumber = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
const ingressOf = (s: V1Service) => (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip).join(",");

/** From the Services' status alone: addresses held by more than one Service, and how many each pool gave. */
function addresses(services: V1Service[], pools: { first: string }[]) {
  const holders = new Map<string, number>();
  for (const s of services)
    for (const i of s.status?.loadBalancer?.ingress ?? []) holders.set(i.ip!, (holders.get(i.ip!) ?? 0) + 1);
  const perPool = pools.map(() => 0);
  for (const ip of holders.keys()) {
    const pool = Math.floor((toNumber(ip) - toNumber(pools[0]!.first)) / POOL_SPAN);
    if (pool >= 0 && pool < pools.length) perPool[pool]!++;
  }
  return {
    withoutAddress: services.filter((s) => !s.status?.loadBalancer?.ingress?.length).length,
    duplicateAddresses: [...holders.values()].filter((n) => n > 1).length,
    addressesByPool: perPool,
  };
}

if (import.meta.main) await report("metal", benchMetal);
