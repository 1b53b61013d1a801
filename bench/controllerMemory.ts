// `make bench-memory`: the controller's memory at size. Against the local environment's real apiserver, with the
// controller as its own process (bare-metal provider, so no cloud emulator bounds the run): N Nodes that look like
// a kubelet's (images, capacities, system info, annotations), M LoadBalancer Services each with an EndpointSlice
// of three endpoints, all given an address; then the controller's resident memory once it has settled, and its
// peak while getting there.
import { join } from "node:path";
import { ControllerProcess, total } from "../test/harness/controllerProcess.ts";
import { startEnvironment } from "../test/harness/environment.ts";
import { mergePatch, TestCluster } from "../test/harness/kube.ts";
import { createPool, installPoolCrd } from "../test/harness/pools.ts";
import { report, sleep } from "./report.ts";
import { sampleUsage, settled } from "./usage.ts";

const SERVICES = Number(process.env.BENCH_MEMORY_SERVICES ?? 5000);
const NODES = Number(process.env.BENCH_MEMORY_NODES ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
const METAL = "portico.io/metal";
const BATCH = 20;
const DEADLINE_MS = 30 * 60_000;

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
    const controller = await ControllerProcess.start({
      kubeconfig: env.controlPlane.kubeconfig,
      args: [
        ...["--provider", "metal", "--load-balancer-class", METAL, "--cluster-name", ns, "--namespace", ns],
        ...["--node-selector", cluster.nodeSelector, "--leader-elect=false", "--workers", String(WORKERS)],
        ...["--resync-period", "3600"],
      ],
      logFile: join(env.dir, "controller.log"),
      env: { PORTICO_LOG_LEVEL: "warn" },
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
      // What V8 holds live (the rest of the RSS is heap it has not given back, code and buffers).
      const heapUsed = total(await controller.metrics(), "nodejs_heap_size_used_bytes");
      return {
        provider: "metal",
        nodes: NODES,
        services: SERVICES,
        endpointSlices: SERVICES,
        secondsToAllAddressed: +seconds.toFixed(1),
        controllerPeakRssMiB: Math.round(peak.rssBytes / 2 ** 20),
        controllerSettledRssMiB: Math.round(idle.rssBytes / 2 ** 20),
        controllerHeapUsedMiB: Math.round(heapUsed / 2 ** 20),
        heapCap: process.env.NODE_OPTIONS ?? "the Deployment's (--max-old-space-size)",
        controllerCpuSeconds: +peak.cpuSeconds.toFixed(1),
      };
    } finally {
      await controller.stop();
    }
  } finally {
    await env.stop();
  }
}

async function addressed(cluster: TestCluster): Promise<number> {
  const list = await cluster.core.listNamespacedService({ namespace: cluster.namespace });
  return list.items.filter((s) => s.status?.loadBalancer?.ingress?.some((i) => i.ip)).length;
}

if (import.meta.main) await report("memory", benchControllerMemory);
