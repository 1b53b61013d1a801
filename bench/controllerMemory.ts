// `make bench-memory`: the controller's memory at size. Against the local environment's real apiserver, with the
// controller as its own process (bare-metal provider, so no cloud emulator bounds the run): N Nodes that look like
// a kubelet's (images, capacities, system info, annotations), M LoadBalancer Services each with an EndpointSlice
// of three endpoints, all given an address; then the controller's resident memory once it has settled, and its
// peak while getting there, with what the settled memory is made of (V8's heap by space, memory outside it, the
// mapped node binary) and the settings the controller ran with. The controller runs as it is deployed: compiled
// to JavaScript (the image's dist/), not from the TypeScript sources, whose type stripping costs Node.js about
// 28 MiB more resident memory (BENCH_MEMORY_SOURCES=1 runs the sources instead).
import { readFile, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { ControllerProcess, total } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { mergePatch, TestCluster } from "../test/harness/kube.ts";
import { createPool, installPoolCrd } from "../test/harness/pools.ts";
import { buildController } from "./build.ts";
import { report, sleep } from "./report.ts";
import { sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_MEMORY_SERVICES ?? 5000);
const NODES = Number(process.env.BENCH_MEMORY_NODES ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const METAL = "portico.io/metal";
const BATCH = 20;
const DEADLINE_MS = 30 * 60_000;
/** The memory aimed at, in megabytes (10^6 bytes). */
const GOAL_MB = 250;
const MIB = 2 ** 20;
const FROM_SOURCES = process.env.BENCH_MEMORY_SOURCES === "1";
const UNBUNDLED = process.env.BENCH_MEMORY_UNBUNDLED === "1";
const CONTROLLER_FLAGS = process.env.BENCH_CONTROLLER_FLAGS;

/** What a kubelet reports of itself besides what Portico reads: most of a Node object's size. */
function kubeletStatus(name: string, i: number) {
  const images = Array.from({ length: 30 }, (_, k) => ({
    names: [
      `registry.example.com/team-${k}/service-${k}@sha256:${String(k).padStart(64, "0")}`,
      `registry.example.com/team-${k}/service-${k}:v1.${k}.0`,
    ],
    sizeBytes: 50_000_000 + k,
  }));
  return {
    conditions: ["MemoryPressure", "DiskPressure", "PIDPressure"]
      .map((type) => ({
        type,
        status: "False",
        reason: `KubeletHasNo${type}`,
        message: "kubelet is healthy",
      }))
      .concat([
        { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" },
      ]),
    addresses: [
      { type: "InternalIP", address: `10.${Math.floor(i / 250)}.${i % 250}.10` },
      { type: "Hostname", address: name },
    ],
    capacity: { cpu: "16", memory: "65843368Ki", pods: "110", "ephemeral-storage": "101430960Ki" },
    allocatable: { cpu: "15890m", memory: "64692392Ki", pods: "110", "ephemeral-storage": "93478772582" },
    nodeInfo: {
      architecture: "amd64",
      bootID: `boot-${i}`,
      containerRuntimeVersion: "containerd://1.7.20",
      kernelVersion: "6.1.0-25-amd64",
      kubeProxyVersion: "",
      kubeletVersion: "v1.34.4",
      machineID: `machine-${i}`,
      operatingSystem: "linux",
      osImage: "Debian GNU/Linux 12 (bookworm)",
      systemUUID: `uuid-${i}`,
    },
    images,
  };
}

/** Once more after a dropped connection (the apiserver closes HTTP/2 connections under load). */
async function retried<T>(fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || !/fetch failed|ECONNRESET|socket/i.test(String((err as Error)?.message)))
        throw err;
      await sleep(500 * i);
    }
  }
}

export async function benchControllerMemory(): Promise<Record<string, unknown>> {
  const env = await startEnvironment({ awsEndpoints: 0 });
  try {
    const cluster = await TestCluster.create(env.controlPlane.kubeconfig, "bench");
    const ns = cluster.namespace;
    await installPoolCrd(cluster);
    // 198.18.0.0/15 (RFC 2544, set aside for benchmarks): far more addresses than Services.
    await createPool(cluster, "big", { addresses: ["198.18.0.1-198.19.255.254"] });
    const progress = (what: string) => process.stderr.write(`  ${what}...\n`);
    progress(`${NODES} Nodes`);
    for (let i = 0; i < NODES; i += BATCH) {
      await Promise.all(
        Array.from({ length: Math.min(BATCH, NODES - i) }, async (_, k) => {
          const node = await retried(() => cluster.createNode(`n${i + k}`));
          await retried(() =>
            cluster.core.patchNode(
              {
                name: node.metadata!.name!,
                body: {
                  metadata: {
                    annotations: {
                      "node.alpha.kubernetes.io/ttl": "0",
                      "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                      "csi.volume.kubernetes.io/nodeid": JSON.stringify({ "ebs.csi.aws.com": `i-${i + k}` }),
                    },
                  },
                },
              },
              mergePatch,
            ),
          );
          await retried(() =>
            cluster.core.patchNodeStatus(
              { name: node.metadata!.name!, body: { status: kubeletStatus(node.metadata!.name!, i + k) } },
              mergePatch,
            ),
          );
        }),
      );
    }
    progress(`${SERVICES} Services with their EndpointSlices`);
    for (let i = 0; i < SERVICES; i += BATCH) {
      await Promise.all(
        Array.from({ length: Math.min(BATCH, SERVICES - i) }, async (_, k) => {
          const name = `s${i + k}`;
          await retried(() =>
            cluster.createService(name, {
              type: "LoadBalancer",
              loadBalancerClass: METAL,
              // The node-port range holds 2768: more Services than that cannot all have one (bare metal needs none).
              allocateLoadBalancerNodePorts: false,
              selector: { app: name },
              ports: [{ name: "http", port: 80, targetPort: 8080 }],
            }),
          );
          await retried(() =>
            cluster.createEndpointSlice(
              name,
              [0, 1, 2].map((e) => ({
                ip: `10.${100 + Math.floor((i + k) / 250)}.${(i + k) % 250}.${e + 1}`,
                nodeName: `${ns}-n${(i + k + e) % NODES}`,
              })),
              [{ name: "http", port: 8080 }],
              `${name}-slice`,
            ),
          );
        }),
      );
    }
    progress("the controller");
    const main = FROM_SOURCES ? undefined : await buildController("bench-memory", { bundled: !UNBUNDLED });
    const loadAtStart = loadavg().map((l) => +l.toFixed(1));
    const controller = await ControllerProcess.start({
      kubeconfig: env.controlPlane.kubeconfig,
      args: [
        ...["--provider", "metal", "--load-balancer-class", METAL, "--cluster-name", ns, "--namespace", ns],
        ...["--node-selector", cluster.nodeSelector, "--leader-elect=false", "--workers", String(WORKERS)],
        ...["--resync-period", "3600"],
      ],
      logFile: join(env.dir, "controller.log"),
      env: { PORTICO_LOG_LEVEL: "warn" },
      ...(main ? { main: CONTROLLER_FLAGS ? await withFlags(main, CONTROLLER_FLAGS) : main } : {}),
    });
    try {
      const usage = sampleUsage(controller, true);
      const started = performance.now();
      while ((await retried(() => addressed(cluster))) < SERVICES) {
        if (performance.now() - started > DEADLINE_MS)
          throw new Error("the Services did not all get an address");
        await sleep(1000);
      }
      await settled(controller);
      const seconds = (performance.now() - started) / 1000;
      const peak = await usage.stop();
      const idle = await controller.usage();
      const settledMemory = await memoryOf(controller);
      return {
        provider: "metal",
        controllerRunFrom: !main
          ? "TypeScript sources"
          : UNBUNDLED
            ? "JavaScript, compiled by tsc, not bundled"
            : "JavaScript, compiled and bundled as the image's",
        nodes: NODES,
        services: SERVICES,
        endpointSlices: SERVICES,
        secondsToAllAddressed: +seconds.toFixed(1),
        controllerPeakRssMiB: Math.round(peak.rssBytes / MIB),
        controllerPeakRssMB: Math.round(peak.rssBytes / 1e6),
        controllerSettledRssMiB: Math.round(idle.rssBytes / MIB),
        goalMB: GOAL_MB,
        peakWithinGoal: peak.rssBytes <= GOAL_MB * 1e6,
        settled: settledMemory,
        controllerSettings: await settingsOf(controller.pid),
        controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadavg().map((l) => +l.toFixed(1)),
      };
    } finally {
      await controller.stop();
    }
  } finally {
    await env.stop();
  }
}

/**
 * What the settled controller's resident memory is made of, in MiB: V8's heap (committed, and live of it; the
 * young generation; the old generation committed and live), memory V8 accounts for outside its heap (buffers),
 * and from /proc the anonymous memory (heap, malloc) against the mapped files (mostly the node binary itself).
 */
async function memoryOf(controller: ControllerProcess): Promise<Record<string, number>> {
  const m = await controller.metrics();
  const mib = (name: string, space?: string) =>
    Math.round(total(m, name, space ? new RegExp(`space="${space}"`) : undefined) / MIB);
  const status = await readFile(`/proc/${controller.pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    rssMiB: Math.round(kib("VmRSS") / 1024),
    rssAnonymousMiB: Math.round(kib("RssAnon") / 1024),
    rssFilesMiB: Math.round(kib("RssFile") / 1024),
    heapTotalMiB: mib("nodejs_heap_size_total_bytes"),
    heapUsedMiB: mib("nodejs_heap_size_used_bytes"),
    newSpaceMiB: mib("nodejs_heap_space_size_total_bytes", "new"),
    oldSpaceMiB: mib("nodejs_heap_space_size_total_bytes", "old"),
    oldSpaceUsedMiB: mib("nodejs_heap_space_size_used_bytes", "old"),
    codeSpaceMiB: mib("nodejs_heap_space_size_total_bytes", "code"),
    largeObjectSpaceMiB: mib("nodejs_heap_space_size_total_bytes", "large_object"),
    externalMiB: mib("nodejs_external_memory_bytes"),
  };
}

/** The Node.js flags the controller runs with (its own, given in controller/main.ts, and the Deployment's). */
async function settingsOf(pid: number): Promise<Record<string, string>> {
  const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
  const environ = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
  const env = (name: string) =>
    environ.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1) ?? "(unset)";
  const script = argv.findIndex((a) => /controller\/main\.[jt]s$/.test(a));
  return {
    nodeFlags: argv.slice(1, script).join(" "),
    NODE_OPTIONS: env("NODE_OPTIONS"),
    MALLOC_ARENA_MAX: env("MALLOC_ARENA_MAX"),
    MALLOC_MMAP_THRESHOLD_: env("MALLOC_MMAP_THRESHOLD_"),
  };
}

/**
 * A script that starts the controller at `main` with Node.js flags to try (BENCH_CONTROLLER_FLAGS): V8's flags
 * are refused in NODE_OPTIONS, and the controller is started as `node <main>`.
 */
async function withFlags(main: string, flags: string): Promise<string> {
  const wrapper = join(dirname(main), "with-flags.mjs");
  const argv = JSON.stringify(flags.split(/\s+/).filter(Boolean));
  await writeFile(
    wrapper,
    `process.execve(process.execPath, [process.execPath, ...${argv}, ${JSON.stringify(main)}, ...process.argv.slice(2)], process.env);\n`,
  );
  return wrapper;
}

async function addressed(cluster: TestCluster): Promise<number> {
  const list = await cluster.core.listNamespacedService({ namespace: cluster.namespace });
  return list.items.filter((s) => s.status?.loadBalancer?.ingress?.some((i) => i.ip)).length;
}

if (import.meta.main) await report("memory", benchControllerMemory);
