// `make bench-azure`. Against the local environment (real apiserver) and Portico's Azure ARM emulator, with the
// controller and the emulator each running as a process of its own: ARM calls for one new Service, time and ARM
// calls for N Services × M nodes to get their IP (with the controller's and the emulator's memory and CPU), and
// the calls a no-change resync costs.
//
// Every Service is public, with a tagged public IP Portico makes: an internal Service on a shared load balancer
// is recorded in that load balancer's tags, and ARM's 50 tags per resource leave room for only 48 of them. By
// default they share the cluster's one load balancer, as they do unless configured otherwise;
// BENCH_AZURE_LAYOUT=per-service gives each its own (`loadBalancerPerService`).
//
// The default size is past limits Azure documents, which both the emulator and the provider enforce: 600 frontends
// per Standard load balancer and 300 load-balancing rules per node (every node backs every Service, in either
// layout). So by default (BENCH_AZURE_LIMITS=off) the run switches those checks off on both sides, to measure
// Portico and the emulator at that size, and says so in its figures; BENCH_AZURE_LIMITS=azure keeps them, for
// sizes within them.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AZURE_LIMITS } from "../providers/azure/limits.ts";
import { trustCertificateAuthority } from "../test/emulators/azure/index.ts";
import { DOCUMENTED_LIMITS } from "../test/emulators/azure/limits.ts";
import { AZURE_CLASS, AZURE_WORLD, TestAzure } from "../test/harness/azure.ts";
import { ControllerProcess, total, scopedTo } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { TestCluster } from "../test/harness/kube.ts";
import { ManagedProcess } from "../test/harness/processes.ts";
import { percentile, report, sleep } from "./report.ts";
import { processUsage, sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const NODES = Number(process.env.BENCH_NODES ?? 100);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const LAYOUT = process.env.BENCH_AZURE_LAYOUT ?? "shared";
const LIMITS = process.env.BENCH_AZURE_LIMITS ?? "off";
/** Node addresses are 10.0.1.10 onwards, in the seeded /24 node subnet. */
const MAX_NODES = 240;
const POLL_MS = 500;
/** Far beyond what any size should need: a run that gets stuck says so instead of hanging. */
const DEADLINE_MS = 30 * 60_000;

const EMULATOR_MAIN = join(import.meta.dirname, "..", "test", "emulators", "azure", "main.ts");

export async function benchAzure(): Promise<Record<string, unknown>> {
  if (LAYOUT !== "per-service" && LAYOUT !== "shared")
    throw new Error(`BENCH_AZURE_LAYOUT=${LAYOUT}: use per-service or shared`);
  if (LIMITS !== "off" && LIMITS !== "azure")
    throw new Error(`BENCH_AZURE_LIMITS=${LIMITS}: use off or azure`);
  if (LIMITS === "azure" && SERVICES + 1 > AZURE_LIMITS.rulesPerBackendAddress)
    throw new Error(
      `BENCH_AZURE_LIMITS=azure: ${SERVICES + 1} Services would put more than ${AZURE_LIMITS.rulesPerBackendAddress} rules on each node`,
    );
  const limitsOff = LIMITS === "off";
  if (NODES > MAX_NODES)
    throw new Error(`BENCH_NODES=${NODES}: at most ${MAX_NODES} fit the seeded node subnet`);
  const env = await startEnvironment({ awsEndpoints: 0 });
  let emulator: ManagedProcess | undefined;
  try {
    const arm = await startEmulator(join(env.dir, "azure"), limitsOff);
    emulator = arm.process;
    const { NODE_EXTRA_CA_CERTS: caCertPath, ...environment } = arm.environment;
    trustCertificateAuthority(caCertPath!);
    Object.assign(process.env, environment);
    const azure = await TestAzure.fresh();
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const ns = cluster.namespace;
    const configFile = join(env.dir, "azure.json");
    await writeFile(
      configFile,
      JSON.stringify(
        {
          ...azure.config({ loadBalancerPerService: LAYOUT === "per-service" }),
          ...(limitsOff ? { limits: Object.fromEntries(Object.keys(AZURE_LIMITS).map((k) => [k, 0])) } : {}),
        },
        null,
        2,
      ),
    );
    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
    progress(`${NODES} nodes`);
    for (let i = 0; i < NODES; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, NODES - i) }, (_, k) =>
          cluster.createNode(`n${i + k}`, {
            internalIP: `10.0.1.${10 + i + k}`,
            providerID: `azure:///subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute/virtualMachines/n${i + k}`,
          }),
        ),
      );
    const start = (log: string) =>
      ControllerProcess.start({
        kubeconfig: env.controlPlane.kubeconfig,
        args: [
          "--provider",
          "azure",
          "--azure-config",
          configFile,
          ...scopedTo(cluster),
          "--leader-elect=false",
          "--workers",
          String(WORKERS),
          // No periodic resync or orphan collection during a run: the restart below measures what one costs
          // (including the collection every start does).
          "--resync-period",
          "3600",
          "--orphan-collection-period",
          "3600",
        ],
        logFile: join(env.dir, log),
        // The child reads NODE_EXTRA_CA_CERTS when it starts; this process's own trust does not carry over.
        env: { ...environment, NODE_EXTRA_CA_CERTS: caCertPath, PORTICO_LOG_LEVEL: "warn" },
      });
    const controller = await start("controller.log");
    // Let the start-up orphan collection finish before anything is counted.
    await settled(controller);
    await azure.clearRequests();

    const svc = (name: string) => ({
      metadata: { name },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: AZURE_CLASS,
        selector: { app: name },
        ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
      },
    });
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

    progress("one Service");
    await cluster.core.createNamespacedService({ namespace: ns, body: svc("single") });
    await waitForIps(1);
    await settled(controller);
    const single = armCalls(await azure.requestCounts());

    progress(`${SERVICES} Services on ${NODES} nodes`);
    await azure.clearRequests();
    const reconcilesBefore = total(await controller.metrics(), "portico_reconciles_total");
    const usage = sampleUsage(controller);
    const emulatorCpuBefore = (await processUsage(emulator.pid!)).cpuSeconds;
    const started = performance.now();
    // Watched from the first create on, so each Service's own time to its IP is seen.
    const allIps = waitForIps(SERVICES + 1);
    for (let i = 0; i < SERVICES; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, SERVICES - i) }, async (_, k) => {
          await cluster.core.createNamespacedService({ namespace: ns, body: svc(`s${i + k}`) });
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
      services: SERVICES,
      nodes: NODES,
      seconds: +(allHaveIp / 1000).toFixed(1),
      servicesPerSecond: +(SERVICES / (allHaveIp / 1000)).toFixed(1),
      createSeconds: +createSeconds.toFixed(1),
      settledSeconds: +((lastChange - started) / 1000).toFixed(1),
      timeToIpP50Seconds: +(percentile(latencies, 50) / 1000).toFixed(1),
      timeToIpP99Seconds: +(percentile(latencies, 99) / 1000).toFixed(1),
      armCallsPerService: +(bulkCalls.calls / SERVICES).toFixed(1),
      armWritesPerService: +(bulkCalls.writes / SERVICES).toFixed(2),
      perServiceByOperation: perService(bulkCalls.byOperation, SERVICES),
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
    while (total(await resyncer.metrics(), "portico_reconciles_total") < SERVICES + 1) {
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
      services: SERVICES + 1,
      seconds: +resyncSeconds.toFixed(1),
      settledSeconds: +((resyncSettled - resyncStarted) / 1000).toFixed(1),
      reconciles: total(resyncMetrics, "portico_reconciles_total"),
      armCalls: resyncCalls.calls,
      armCallsPerService: +(resyncCalls.calls / (SERVICES + 1)).toFixed(1),
      byOperation: resyncCalls.byOperation,
      writes: resyncCalls.writes,
      orphanCollection: "included (one observation at start)",
      controllerPeakRssMiB: Math.round(resyncPeak.rssBytes / 2 ** 20),
      controllerCpuSecondsSinceStart: +resyncPeak.cpuSeconds.toFixed(1),
      emulatorCpuSeconds: +resyncEmulatorCpu.toFixed(1),
    };
    await resyncer.stop();
    return {
      layout:
        LAYOUT === "per-service"
          ? "public Services, each with its own public IP and load balancer (loadBalancerPerService)"
          : "public Services, each with its own public IP, on the cluster's one shared load balancer",
      emulator:
        "Portico's ARM emulator in its own process, defaults (operations done at once, Retry-After: 1)",
      azureLimits: limitsOff
        ? "off in the emulator and the provider (1000 Services on 100 nodes are past Azure's 600 frontends per load balancer and 300 rules per node); BENCH_AZURE_LIMITS=azure keeps them"
        : "Azure's documented limits, enforced by the emulator and checked by the provider",
      workers: WORKERS,
      newService: { armCalls: single.calls, writes: single.writes, byOperation: single.byOperation },
      bulk,
      noChangeResync: resync,
    };
  } finally {
    await emulator?.stop();
    await env.stop();
  }
}

/** ARM requests among the emulator's counts (token and discovery requests are Entra ID's, not ARM's). */
function armCalls(counts: Record<string, number>) {
  let calls = 0;
  let writes = 0;
  const byOperation: Record<string, number> = {};
  for (const [op, n] of Object.entries(counts)) {
    if (/ (token|discovery)$/.test(op)) continue;
    calls += n;
    if (/^(PUT|PATCH|DELETE) /.test(op)) writes += n;
    byOperation[op] = n;
  }
  return { calls, writes, byOperation };
}

function perService(byOperation: Record<string, number>, services: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(byOperation)
      .sort(([, a], [, b]) => b - a)
      .map(([op, n]) => [op, +(n / services).toFixed(2)]),
  );
}

/** ARM's refusals by code: lost etag races (412), busy resources (409), throttling. */
async function errorsByCode(azure: TestAzure): Promise<Record<string, number> | "none"> {
  const out: Record<string, number> = {};
  for (const r of await azure.requests())
    if (r.status >= 400) out[r.code ?? String(r.status)] = (out[r.code ?? String(r.status)] ?? 0) + 1;
  return Object.keys(out).length ? out : "none";
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
  const proc = ManagedProcess.start(
    "azure-emulator",
    process.execPath,
    [EMULATOR_MAIN, "--dir", dir, ...limits],
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
