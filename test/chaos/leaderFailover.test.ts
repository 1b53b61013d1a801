// Two controller processes under load, the leader killed with SIGKILL mid-way: the other takes over once the
// Lease expires, never while the dead one might still work, and the cloud ends exactly as the Services ask.
import { join } from "node:path";
import { inject } from "vitest";
import { expect, test, waitFor } from "../harness/index.ts";
import { ControllerProcess, scopedTo } from "../harness/controllerProcess.ts";
import { awsWorld, lbService } from "../integration/aws/fixtures.ts";
import { inventory } from "../integration/aws/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 20);

test(
  `leader killed while ${SERVICES} Services converge: the follower finishes, no double work`,
  { timeout: 600_000 },
  async ({ cluster, aws }) => {
    await awsWorld(cluster, aws, 2);
    const start = (name: string) =>
      ControllerProcess.start({
        kubeconfig: inject("kubeconfig"),
        args: [
          ...scopedTo(cluster),
          "--leader-election-namespace",
          cluster.namespace,
          "--lease-duration",
          "3",
          "--workers",
          "8",
        ],
        logFile: join("/tmp", `portico-leader-${cluster.namespace}-${name}.log`),
      });
    const replicas = [await start("a"), await start("b")];
    const leading = async () => {
      const flags = await Promise.all(
        replicas.map(
          async (r) =>
            ((await r.metrics().catch(() => new Map<string, number>())).get("portico_leader") ?? 0) === 1,
        ),
      );
      return replicas.filter((_, i) => flags[i]);
    };
    let overlap = 0;
    const sampler = setInterval(() => void leading().then((l) => (overlap += l.length > 1 ? 1 : 0)), 100);
    try {
      const [leader] = await waitFor("a leader", async () => {
        const l = await leading();
        return l.length === 1 ? l : undefined;
      });
      const follower = replicas.find((r) => r !== leader)!;
      await Promise.all(
        Array.from({ length: SERVICES }, (_, i) => cluster.createService(`svc-${i}`, lbService())),
      );
      await waitFor("some NLBs to exist", async () => (await inventory(aws)).loadBalancers.length >= 3, {
        intervalMs: 50,
      });
      await leader!.kill();
      replicas.splice(replicas.indexOf(leader!), 1);
      await waitFor("the follower to lead", async () => (await leading()).includes(follower), {
        timeoutMs: 30_000,
      });
      await waitFor(
        "every Service to get its hostname",
        async () =>
          (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.every(
            (s) => s.status?.loadBalancer?.ingress?.[0]?.hostname,
          ),
        { timeoutMs: 180_000, intervalMs: 500 },
      );
      await follower.waitQueueEmpty();
      const inv = await inventory(aws);
      expect(inv.loadBalancers).toHaveLength(SERVICES);
      expect(new Set(inv.loadBalancers.map((lb) => lb.name)).size).toBe(SERVICES);
      expect(inv.targetGroups).toHaveLength(SERVICES);
      expect(inv.securityGroups).toHaveLength(SERVICES);
      expect(overlap).toBe(0);
      await follower.stop();
    } finally {
      clearInterval(sampler);
      await Promise.all(replicas.map((r) => r.stop()));
    }
  },
);
