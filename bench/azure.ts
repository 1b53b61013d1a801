// `make bench-azure`. Against the local environment (real apiserver) and Portico's Azure ARM emulator, with the
// controller and the emulator each running as a process of its own: ARM calls for one new Service, time and ARM
// calls for N Services × M nodes to get their IP (with the controller's and the emulator's memory and CPU), and
// the calls a no-change resync costs; these with ARM answering as fast as it can and Portico's rate limiter off,
// so they compare with earlier runs. A last phase (bench/azureThrottled.ts; BENCH_THROTTLE=0 leaves it out) makes
// new Services under ARM's throttling with Azure's figures, the rate limiter on, and sets its figures beside these.
//
// Every Service is public, with a tagged public IP Portico makes. By default (BENCH_AZURE_LAYOUT=multiple) they
// are spread over several Standard load balancers as a user of cloud-provider-azure's "multiple standard load
// balancers" writes it: multipleStandardLoadBalancerConfigurations with one entry per 250 Services, each with the
// node pool (VM scale set) of its own that is its primary, so each node backs only its own load balancer's rules.
// That keeps every documented limit (BENCH_AZURE_LIMITS=azure, the default): 300 rules per backend address (250
// per node), 600 frontends per load balancer, 1000 security rules per group (one per Service: the N Services count
// the first one measured alone), 1000 public IPs per region. BENCH_AZURE_LAYOUT=shared puts them all on the
// cluster's one load balancer, which past 300 Services needs BENCH_AZURE_LIMITS=off (checks off on both sides);
// per-service gives each its own (`loadBalancerPerService`).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { AZURE_LIMITS } from "../providers/azure/limits/limits.ts";
import { trustCertificateAuthority } from "../test/emulators/azure/index.ts";
import { DOCUMENTED_LIMITS } from "../test/emulators/azure/limits.ts";
import { AZURE_CLASS, AZURE_WORLD, TestAzure } from "../test/harness/azure.ts";
import { ControllerProcess, total, scopedTo } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { ManagedProcess } from "../test/harness/processes.ts";
import { armCalls, errorsByCode, perService } from "./armCalls.ts";
import { throttledPhase, throttledSummary } from "./azureThrottled.ts";
import { buildController } from "./build.ts";
import { percentile, report, sleep } from "./report.ts";
import { processUsage, sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const NODES = Number(process.env.BENCH_NODES ?? 100);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const LAYOUT = process.env.BENCH_AZURE_LAYOUT ?? "multiple";
const LIMITS = process.env.BENCH_AZURE_LIMITS ?? "azure";
const THROTTLE = process.env.BENCH_THROTTLE !== "0";
/** Services per load balancer in the multiple layout: within 300 rules per node, with room for a few more. */
const SERVICES_PER_LOAD_BALANCER = Number(process.env.BENCH_AZURE_SERVICES_PER_LB ?? 250);
/** Node addresses are 10.0.1.10 onwards, in the seeded /24 node subnet. */
const MAX_NODES = 240;
const POLL_MS = 500;
/** Far beyond what any size should need: a run that gets stuck says so instead of hanging. */
const DEADLINE_MS = 30 * 60_000;

// No periodic resync or orphan collection during a run: the restart measures what one costs (including the
// collection every start does).
const CONTROLLER_ARGS = [
  "--leader-elect=false",
  `--workers=${WORKERS}`,
  "--resync-period=3600",
  "--orphan-collection-period=3600",
];

const EMULATOR_MAIN = join(import.meta.dirname, "..", "test", "emulators", "azure", "main.ts");

export async function benchAzure(): Promise<Record<string, unknown>> {
  if (LAYOUT !== "per-service" && LAYOUT !== "shared" && LAYOUT !== "multiple")
    throw new Error(`BENCH_AZURE_LAYOUT=${LAYOUT}: use multiple, per-service or shared`);
  if (LIMITS !== "off" && LIMITS !== "azure")
    throw new Error(`BENCH_AZURE_LIMITS=${LIMITS}: use off or azure`);
  const loadBalancers = LAYOUT === "multiple" ? Math.ceil(SERVICES / SERVICES_PER_LOAD_BALANCER) : 1;
  if (loadBalancers > NODES)
    throw new Error(`BENCH_NODES=${NODES}: ${loadBalancers} load balancers need a node pool each`);
  const perNode = LAYOUT === "multiple" ? SERVICES_PER_LOAD_BALANCER : SERVICES;
  if (LIMITS === "azure" && perNode > AZURE_LIMITS.rulesPerBackendAddress)
    throw new Error(
      `BENCH_AZURE_LIMITS=azure: ${perNode} Services would put more than ${AZURE_LIMITS.rulesPerBackendAddress} rules on each node`,
    );
  const limitsOff = LIMITS === "off";
  if (NODES > MAX_NODES)
    throw new Error(`BENCH_NODES=${NODES}: at most ${MAX_NODES} fit the seeded node subnet`);
  const loadAtStart = loadavg().map((l) => +l.toFixed(1));
  const env = await startEnvironment({ awsEndpoints: 0 });
  let emulator: ManagedProcess | undefined;
  try {
    const arm = await startEmulator(join(env.dir, "azure"), limitsOff);
    emulator = arm.process;
    const { NODE_EXTRA_CA_CERTS: caCertPath, ...environment } = arm.environment;
    trustCertificateAuthority(caCertPath!);
    Object.assign(process.env, environment);
    const azure = await TestAzure.fresh();
    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
    // A cluster's configuration (one load balancer per SERVICES_PER_LOAD_BALANCER Services, each the primary of a
    // scale set of its own) and its nodes.
    const prepare = async (on: TestCluster): Promise<string> => {
      const pools = Array.from({ length: loadBalancers }, (_, i) => ({
        // The first is the cluster's own load balancer (named as the cluster), as upstream requires.
        name: i === 0 ? on.namespace : `${on.namespace}-${i + 1}`,
        primaryVMSet: `pool-${i + 1}`,
      }));
      const file = join(env.dir, `azure-${on.namespace}.json`);
      await writeFile(
        file,
        JSON.stringify({
          ...azure.config({ loadBalancerPerService: LAYOUT === "per-service" }),
          ...(LAYOUT === "multiple" ? { multipleStandardLoadBalancerConfigurations: pools } : {}),
          ...(limitsOff ? { limits: Object.fromEntries(Object.keys(AZURE_LIMITS).map((k) => [k, 0])) } : {}),
        }),
      );
      progress(`${NODES} nodes`);
      for (let i = 0; i < NODES; i += 25)
        await Promise.all(
          Array.from({ length: Math.min(25, NODES - i) }, (_, k) =>
            on.createNode(`n${i + k}`, {
              internalIP: `10.0.1.${10 + i + k}`,
              providerID: nodeProviderId(azure.subscriptionId, i + k, LAYOUT === "multiple" ? pools : []),
            }),
          ),
        );
      return file;
    };
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const ns = cluster.namespace;
    // BENCH_THROTTLE=only: the throttled phase alone (below), for trying the rate limiter out.
    const only = process.env.BENCH_THROTTLE === "only";
    const configFile = only ? "" : await prepare(cluster);
    // The child reads NODE_EXTRA_CA_CERTS when it starts; this process's own trust does not carry over.
    const childEnv = { ...environment, NODE_EXTRA_CA_CERTS: caCertPath, PORTICO_LOG_LEVEL: "warn" };
    // Portico's rate limiter is off but in the throttled phase, so that these figures compare with earlier runs.
    // The controller as the image runs it (bundled), unless BENCH_FROM_SOURCES=1 runs the TypeScript sources.
    const main = process.env.BENCH_FROM_SOURCES === "1" ? undefined : await buildController("bench-azure");
    const start = (log: string, on = cluster, file = configFile, rateLimit = "off") =>
      ControllerProcess.start({
        ...(main ? { main } : {}),
        kubeconfig: env.controlPlane.kubeconfig,
        args: ["--provider", "azure", "--azure-config", file, ...scopedTo(on), ...CONTROLLER_ARGS],
        logFile: join(env.dir, log),
        env: { ...childEnv, PORTICO_AZURE_RATE_LIMIT: rateLimit },
      });

    // Each Service has a ready endpoint (an EndpointSlice as the EndpointSlice controller writes it, made before
    // the Service), as Services with pods do: one without would be looked at again and again until it serves.
    let endpoints = 0;
    const withEndpoint = async (name: string, on = cluster) => {
      const i = endpoints++;
      await on.createEndpointSlice(
        name,
        [{ ip: `10.244.${Math.floor(i / 250)}.${(i % 250) + 1}`, nodeName: `n${i % NODES}` }],
        [{ name: "http", port: 8080 }],
      );
      return svc(name);
    };
    const svc = (name: string) => ({
      metadata: { name },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: AZURE_CLASS,
        selector: { app: name },
        ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
      },
    });
    const throttledPhaseHere = () =>
      throttledPhase({
        kubeconfig: env.controlPlane.kubeconfig,
        prepare,
        start,
        withEndpoint,
        progress,
      });
    if (only) return { throttled: await throttledPhaseHere() };
    const controller = await start("controller.log");
    // Let the start-up orphan collection finish before anything is counted.
    await settled(controller);
    await azure.clearRequests();
    const ipSince = new Map<string, number>();
    const createdAt = new Map<string, number>();
    const withIp = async () => {
      const now = performance.now();
      for (const s of (await cluster.core.listNamespacedService({ namespace: ns })).items)
        if (s.status?.loadBalancer?.ingress?.[0]?.ip && !ipSince.has(s.metadata!.name!))
          ipSince.set(s.metadata!.name!, now);
      return ipSince.size;
    };
    const waitForIps = async (want: number) => {
      const deadline = performance.now() + DEADLINE_MS;
      while ((await withIp()) < want) {
        if (performance.now() > deadline)
          throw new Error(
            `only ${ipSince.size} of ${want} Services got an IP in ${DEADLINE_MS / 60_000} minutes`,
          );
        await sleep(POLL_MS);
      }
    };

    // The first Service is measured alone; the N Services are it and the BULK made together after it.
    const BULK = SERVICES - 1;
    progress("one Service");
    await cluster.core.createNamespacedService({ namespace: ns, body: await withEndpoint("single") });
    await waitForIps(1);
    await settled(controller);
    const single = armCalls(await azure.requestCounts());

    progress(`${BULK} Services on ${NODES} nodes`);
    await azure.clearRequests();
    const reconcilesBefore = total(await controller.metrics(), "portico_reconciles_total");
    const usage = sampleUsage(controller);
    const emulatorCpuBefore = (await processUsage(emulator.pid!)).cpuSeconds;
    const started = performance.now();
    // Watched from the first create on, so each Service's own time to its IP is seen.
    const allIps = waitForIps(SERVICES);
    for (let i = 0; i < BULK; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, BULK - i) }, async (_, k) => {
          const body = await withEndpoint(`s${i + k}`);
          await cluster.core.createNamespacedService({ namespace: ns, body });
          createdAt.set(`s${i + k}`, performance.now());
        }),
      );
    const createSeconds = (performance.now() - started) / 1000;
    await allIps;
    const allHaveIp = Math.max(...ipSince.values()) - started;
    const lastChange = await settled(controller);
    const peak = await usage.stop();
    const emulatorCpu = (await processUsage(emulator.pid!)).cpuSeconds - emulatorCpuBefore;
    const latencies = [...createdAt].map(([name, at]) => ipSince.get(name)! - at);
    const bulkCalls = armCalls(await azure.requestCounts());
    const bulk = {
      services: BULK,
      nodes: NODES,
      seconds: +(allHaveIp / 1000).toFixed(1),
      servicesPerSecond: +(BULK / (allHaveIp / 1000)).toFixed(1),
      createSeconds: +createSeconds.toFixed(1),
      settledSeconds: +((lastChange - started) / 1000).toFixed(1),
      timeToIpP50Seconds: +(percentile(latencies, 50) / 1000).toFixed(1),
      timeToIpP99Seconds: +(percentile(latencies, 99) / 1000).toFixed(1),
      armCallsPerService: +(bulkCalls.calls / BULK).toFixed(1),
      armWritesPerService: +(bulkCalls.writes / BULK).toFixed(2),
      perServiceByOperation: perService(bulkCalls.byOperation, BULK),
      armErrors: await errorsByCode(azure),
      reconciles: total(await controller.metrics(), "portico_reconciles_total") - reconcilesBefore,
      controllerPeakRssMiB: Math.round(peak.rssBytes / 2 ** 20),
      controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
      emulatorCpuSeconds: +emulatorCpu.toFixed(1),
    };

    progress("a no-change resync (controller restart)");
    // A restarted controller enqueues every Service and observes ARM for each: what a periodic resync costs too.
    await controller.stop();
    await azure.clearRequests();
    const emulatorCpuBeforeResync = (await processUsage(emulator.pid!)).cpuSeconds;
    // Timed from the process's start: a restart's cost includes listing everything before reconciling.
    const resyncStarted = performance.now();
    const resyncer = await start("controller-resync.log");
    const resyncUsage = sampleUsage(resyncer, true);
    while ((await reconcilesSoFar(resyncer)) < SERVICES) {
      if (performance.now() - resyncStarted > DEADLINE_MS)
        throw new Error(
          `the restarted controller did not reconcile every Service in ${DEADLINE_MS / 60_000} minutes`,
        );
      await sleep(250);
    }
    const resyncSeconds = (performance.now() - resyncStarted) / 1000;
    const resyncSettled = await settled(resyncer);
    const resyncPeak = await resyncUsage.stop();
    const resyncEmulatorCpu = (await processUsage(emulator.pid!)).cpuSeconds - emulatorCpuBeforeResync;
    const resyncCalls = armCalls(await azure.requestCounts());
    const resyncMetrics = await resyncer.metrics();
    const resync = {
      services: SERVICES,
      seconds: +resyncSeconds.toFixed(1),
      settledSeconds: +((resyncSettled - resyncStarted) / 1000).toFixed(1),
      reconciles: total(resyncMetrics, "portico_reconciles_total"),
      armCalls: resyncCalls.calls,
      armCallsPerService: +(resyncCalls.calls / SERVICES).toFixed(1),
      byOperation: resyncCalls.byOperation,
      writes: resyncCalls.writes,
      orphanCollection: "included (one observation at start)",
      controllerPeakRssMiB: Math.round(resyncPeak.rssBytes / 2 ** 20),
      controllerCpuSecondsSinceStart: +resyncPeak.cpuSeconds.toFixed(1),
      emulatorCpuSeconds: +resyncEmulatorCpu.toFixed(1),
    };
    await resyncer.stop();
    const throttled = THROTTLE ? await throttledPhaseHere() : "not run (BENCH_THROTTLE=0)";
    return {
      controllerRunFrom: main ? "JavaScript, compiled and bundled as the image's" : "TypeScript sources",
      summary: {
        services: SERVICES,
        nodes: NODES,
        loadBalancers,
        armCallsForNewService: single.calls,
        armCallsPerConvergedService: bulk.armCallsPerService,
        armCallsPerServiceOnNoChangeResync: resync.armCallsPerService,
        writesOnNoChangeResync: resync.writes,
        secondsToConverge: bulk.seconds,
        controllerPeakRssMiB: Math.max(bulk.controllerPeakRssMiB, resync.controllerPeakRssMiB),
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => +l.toFixed(1)),
        // Side by side: the same figures under ARM's throttling, with the rate limiter on.
        throttled: typeof throttled === "string" ? throttled : throttledSummary(throttled),
      },
      layout:
        LAYOUT === "per-service"
          ? "public Services, each with its own public IP and load balancer (loadBalancerPerService)"
          : LAYOUT === "multiple"
            ? `public Services, each with its own public IP, spread over ${loadBalancers} Standard load balancers (multipleStandardLoadBalancerConfigurations, one per ${SERVICES_PER_LOAD_BALANCER} Services, each the primary of a VM scale set of ${Math.ceil(NODES / loadBalancers)} nodes)`
            : "public Services, each with its own public IP, on the cluster's one shared load balancer",
      emulator:
        "Portico's ARM emulator in its own process, defaults (operations done at once, Retry-After: 1)",
      azureLimits: limitsOff
        ? "off in the emulator and the provider; BENCH_AZURE_LIMITS=azure keeps them"
        : "Azure's documented limits, enforced by the emulator and checked by the provider",
      workers: WORKERS,
      newService: { armCalls: single.calls, writes: single.writes, byOperation: single.byOperation },
      bulk,
      noChangeResync: resync,
      rateLimiter: "off in the phases above, on in the throttled one",
      throttled,
    };
  } finally {
    await emulator?.stop();
    await env.stop();
  }
}

/** A standalone VM's, or in the multiple layout a VM of the scale sets taken in turn (so each gets as many). */
function nodeProviderId(subscriptionId: string, i: number, pools: { primaryVMSet: string }[]): string {
  const base = `azure:///subscriptions/${subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute`;
  if (!pools.length) return `${base}/virtualMachines/n${i}`;
  return `${base}/virtualMachineScaleSets/${pools[i % pools.length]!.primaryVMSet}/virtualMachines/${i}`;
}

/**
 * The controller's reconciles so far. A metrics request the loaded machine drops (a connection reset) is asked
 * again; a controller that is gone fails the run after a few tries.
 */
async function reconcilesSoFar(controller: ControllerProcess): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return total(await controller.metrics(), "portico_reconciles_total");
    } catch (err) {
      if (attempt >= 5) throw err;
      process.stderr.write(`  metrics request failed (${(err as Error).message}); asking again\n`);
      await sleep(1000);
    }
  }
}

/**
 * The emulator as `node test/emulators/azure/main.ts` runs it, with its defaults (as the integration tests run
 * it: operations finish at once, Retry-After: 1), and the variables it prints for clients to export.
 */
async function startEmulator(
  dir: string,
  limitsOff: boolean,
): Promise<{ process: ManagedProcess; environment: Record<string, string> }> {
  await mkdir(dir, { recursive: true });
  const log = join(dir, "emulator.log");
  const limits = limitsOff
    ? [
        "--limits",
        Object.keys(DOCUMENTED_LIMITS)
          .map((k) => `${k}=0`)
          .join(","),
      ]
    : [];
  // BENCH_AZURE_PROFILE=<dir>: the emulator's CPU profile (node --cpu-prof), written when it stops.
  const profile = process.env.BENCH_AZURE_PROFILE
    ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_AZURE_PROFILE]
    : [];
  const proc = ManagedProcess.start(
    "azure-emulator",
    process.execPath,
    [...profile, EMULATOR_MAIN, "--dir", dir, ...limits],
    log,
  );
  let environment: Record<string, string> = {};
  await proc.waitReady(async () => {
    const printed = await readFile(log, "utf8");
    environment = Object.fromEntries(
      [...printed.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
    );
    return "AZURE_RESOURCE_MANAGER_ENDPOINT" in environment && "NODE_EXTRA_CA_CERTS" in environment;
  }, 30_000);
  return { process: proc, environment };
}

if (import.meta.main) await report("azure", benchAzure);
