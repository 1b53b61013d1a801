// The controller killed with SIGKILL at random moments while Services converge, again and again: after the
// last restart the cloud holds exactly what the Services ask for — no duplicates, no orphans, nothing lost.
import { join } from "node:path";
import { inject } from "vitest";
import { expect, test, waitFor } from "../harness/index.ts";
import { ControllerProcess, scopedTo } from "../harness/controllerProcess.ts";
import { awsWorld, lbService } from "../integration/aws/fixtures.ts";
import { inventory } from "../integration/aws/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 20);
const KILLS = Number(process.env.CHAOS_KILLS ?? 3);

/** A seeded generator, so a failing run can be repeated exactly (CHAOS_SEED). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

test(
  `SIGKILL at random points while ${SERVICES} Services converge (${KILLS} kills): no duplicate, no orphan, nothing lost`,
  { timeout: 600_000 },
  async ({ cluster, aws }) => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100000);
    const rand = random(seed);
    await awsWorld(cluster, aws, 3);
    const start = () =>
      ControllerProcess.start({
        kubeconfig: inject("kubeconfig"),
        args: [
          ...scopedTo(cluster),
          "--leader-elect=false",
          "--workers",
          "8",
          "--orphan-collection-period",
          "2",
        ],
        logFile: join(process.env.PORTICO_CHAOS_LOGS ?? "/tmp", `portico-chaos-${cluster.namespace}.log`),
      });
    let controller = await start();
    const names = Array.from({ length: SERVICES }, (_, i) => `svc-${i}`);
    await Promise.all(
      names.map((n) =>
        cluster.createService(
          n,
          lbService(undefined, i(n) % 3 === 0 ? { externalTrafficPolicy: "Local" } : {}),
        ),
      ),
    );
    // Some Services change and some go away while the controller keeps dying.
    const deleted = new Set<string>();
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 200 + rand() * 1500));
      await controller.kill();
      const victim = names[Math.floor(rand() * names.length)]!;
      if (!deleted.has(victim)) {
        deleted.add(victim);
        await cluster.core.deleteNamespacedService({ name: victim, namespace: cluster.namespace });
      }
      controller = await start();
    }
    const live = names.filter((n) => !deleted.has(n));
    await waitFor(
      "every live Service to have its hostname and every deleted one to be gone",
      async () => {
        const list = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items;
        return (
          list.length === live.length && list.every((s) => s.status?.loadBalancer?.ingress?.[0]?.hostname)
        );
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    await controller.waitQueueEmpty();
    let summary = "";
    await waitFor(
      "orphans to be collected",
      async () => {
        const inv = await inventory(aws);
        const owners = inv.loadBalancers.map((lb) => `${lb.name}<-${lb.tags["portico.io/service"]}`);
        summary = `seed ${seed}; ${inv.loadBalancers.length} NLBs for ${live.length} live Services; deleted ${[...deleted].join(",")}; NLBs ${owners.sort().join(" ")}`;
        return inv.loadBalancers.length === live.length;
      },
      { timeoutMs: 60_000 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${summary}`);
    });

    const inv = await inventory(aws);
    const owners = inv.loadBalancers.map((lb) => lb.tags["portico.io/service"]!.split("/")[1]).sort();
    expect(owners, `seed ${seed}`).toEqual([...live].sort());
    expect(inv.targetGroups, `seed ${seed}`).toHaveLength(live.length);
    expect(inv.securityGroups, `seed ${seed}`).toHaveLength(live.length);
    for (const lb of inv.loadBalancers) {
      expect(lb.listeners, `seed ${seed}: ${lb.name}`).toHaveLength(1);
      const tg = inv.targetGroups.find((t) => t.arn === lb.listeners[0]!.targetGroupArn);
      expect(tg?.targets, `seed ${seed}: ${lb.name}`).toHaveLength(3);
    }
    const hostnames = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.map(
      (s) => s.status!.loadBalancer!.ingress![0]!.hostname,
    );
    expect(new Set(hostnames).size).toBe(live.length);
    expect(hostnames.sort()).toEqual(inv.loadBalancers.map((lb) => lb.dnsName).sort());
    await controller.stop();
  },
);

function i(name: string): number {
  return Number(name.split("-")[1]);
}
