// The controller killed with SIGKILL at random moments while Services converge on the cluster's shared Azure load
// balancers, again and again: after the last restart ARM holds exactly what the Services ask for — one frontend,
// one rule and one probe per port, one public IP per public Service, their security rules — no duplicates, no
// orphans, nothing lost.
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Service } from "@kubernetes/client-node";
import { inject } from "vitest";
import { expect, test, waitFor } from "../harness/index.ts";
import { ControllerProcess, scopedTo } from "../harness/controllerProcess.ts";
import {
  azureWorld,
  INTERNAL,
  lbService,
  patchService,
  serviceWants,
} from "../integration/azure/fixtures.ts";
import { inventory, inventoryProblems } from "../integration/azure/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 20);
const KILLS = Number(process.env.CHAOS_KILLS ?? 3);

/** A seeded generator, so a failing run can be repeated exactly (CHAOS_SEED). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

/**
 * Public and internal Services, some with externalTrafficPolicy Local (an HTTP probe on the health check node
 * port) and some with a second, UDP port: every kind of part the shared load balancers hold.
 */
function service(i: number): { spec: V1Service["spec"]; annotations: Record<string, string> } {
  const ports: NonNullable<V1Service["spec"]>["ports"] = [
    { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
  ];
  if (i % 5 === 0) ports.push({ name: "dns", port: 53, targetPort: 5353, protocol: "UDP" });
  return {
    spec: lbService(ports, i % 3 === 0 ? { externalTrafficPolicy: "Local" } : {}),
    annotations: i % 4 === 0 ? { ...INTERNAL } : {},
  };
}

test(
  `Azure: SIGKILL at random points while ${SERVICES} Services converge (${KILLS} kills): no duplicate, no orphan, nothing lost`,
  { timeout: 600_000 },
  async ({ cluster, azure }) => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100000);
    const rand = random(seed);
    const world = await azureWorld(cluster, azure, 3);
    // ARM's writes take a while, so kills land while operations are still running and the next controller
    // meets them half done (409 AnotherOperationInProgress, resources still Updating).
    await azure.configure({ operationDurationMs: 100 });
    const configFile = join(tmpdir(), `portico-azure-${cluster.namespace}.json`);
    await writeFile(configFile, JSON.stringify(azure.config()));
    cluster.defer(() => rm(configFile, { force: true }));
    // A child reads NODE_EXTRA_CA_CERTS when it starts; this process's trust of the emulator does not carry over.
    const caCertPath = inject("azureEndpoints").find((e) => e.url === azure.url)!.caCertPath;
    const start = () =>
      ControllerProcess.start({
        kubeconfig: inject("kubeconfig"),
        args: [
          "--provider",
          "azure",
          "--azure-config",
          configFile,
          ...scopedTo(cluster),
          "--leader-elect=false",
          "--workers",
          "8",
          "--orphan-collection-period",
          "2",
        ],
        logFile: join(process.env.PORTICO_CHAOS_LOGS ?? "/tmp", `portico-chaos-${cluster.namespace}.log`),
        env: { NODE_EXTRA_CA_CERTS: caCertPath },
      });
    let controller = await start();
    cluster.defer(() => controller.stop());
    const started = performance.now();
    const names = Array.from({ length: SERVICES }, (_, i) => `svc-${i}`);
    const uids = new Map<string, string>();
    await Promise.all(
      names.map(async (n, i) => {
        const { spec, annotations } = service(i);
        uids.set(n, (await cluster.createService(n, spec, annotations)).metadata!.uid!);
      }),
    );
    // While the controller keeps dying, Services go away and others change port (their rule, probe and
    // security rule are renamed: the old ones must not stay behind).
    const deleted = new Set<string>();
    const changed = new Set<string>();
    const context = () =>
      `seed ${seed}; deleted ${[...deleted].join(",")}; changed ${[...changed].join(",")}`;
    const withAddress = async () =>
      (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.filter(
        (s) => s.status?.loadBalancer?.ingress?.[0]?.ip,
      ).length;
    const progress: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 200 + rand() * 1500));
      await controller.kill();
      progress.push(await withAddress());
      const victim = names[Math.floor(rand() * names.length)]!;
      if (!deleted.has(victim)) {
        deleted.add(victim);
        await cluster.core.deleteNamespacedService({ name: victim, namespace: cluster.namespace });
      }
      const mover = names[Math.floor(rand() * names.length)]!;
      if (!deleted.has(mover) && !changed.has(mover)) {
        changed.add(mover);
        const ports = (await cluster.getService(mover)).spec!.ports!;
        await patchService(cluster, mover, {
          spec: { ports: ports.map((p) => (p.name === "http" ? { ...p, port: 81 } : p)) },
        });
      }
      controller = await start();
    }
    const live = names.filter((n) => !deleted.has(n));
    await waitFor(
      "every live Service to have its address and every deleted one to be gone",
      async () => {
        const list = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items;
        return list.length === live.length && list.every((s) => s.status?.loadBalancer?.ingress?.[0]?.ip);
      },
      { timeoutMs: 300_000, intervalMs: 500 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${context()}`);
    });
    await controller.waitQueueEmpty(120_000);
    const seconds = (performance.now() - started) / 1000;
    const requests = Object.entries(await azure.requestCounts())
      .filter(([operation]) => !/ (token|discovery|other)$/.test(operation))
      .reduce((sum, [, n]) => sum + n, 0);
    console.log(
      `Azure controller kills (${context()}): Services with an address at each kill ${progress.join(", ")} of ${SERVICES}; ` +
        `converged ${seconds.toFixed(1)} s after the Services were created; ${requests} ARM requests (${(requests / SERVICES).toFixed(1)} per Service)`,
    );
    const gone = [...deleted].map((name) => ({ name, uid: uids.get(name)! }));
    let problems: string[] = [];
    await waitFor(
      "the inventory to be exactly what the Services ask for",
      async () => {
        const wants = await serviceWants(cluster);
        problems = inventoryProblems(await inventory(azure), cluster.namespace, wants, gone, world.nodeIPs);
        return problems.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    ).catch(() => undefined);
    expect(problems, context()).toEqual([]);

    const wants = await serviceWants(cluster);
    expect(wants.map((s) => s.name).sort(), context()).toEqual([...live].sort());
    for (const name of changed)
      if (!deleted.has(name))
        expect(
          wants.find((s) => s.name === name)!.ports.map((p) => p.port),
          `${context()}: ${name}`,
        ).toContain(81);
    const inv = await inventory(azure);
    const publicLive = wants.filter((s) => !s.internal).length;
    expect(
      inv.loadBalancers.find((lb) => lb.name === cluster.namespace)?.frontends ?? [],
      context(),
    ).toHaveLength(publicLive);
    expect(
      inv.publicIps.filter((p) => p.tags["portico.io-cluster"] === cluster.namespace),
      context(),
    ).toHaveLength(publicLive);
    await controller.stop();
  },
);
