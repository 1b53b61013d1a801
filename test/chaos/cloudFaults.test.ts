// The cloud misbehaving at random — throttling, 5xx, slow answers, dropped connections — while Services
// converge: everything converges, exactly what the Services ask for exists, and retries stay bounded.
import { AwsProvider } from "../../providers/aws/provider.ts";
import { expect, test, waitFor } from "../harness/index.ts";
import { startPortico } from "../harness/controller.ts";
import { startFaultProxy } from "../harness/faultProxy.ts";
import { awsWorld, lbService } from "../integration/aws/fixtures.ts";
import { inventory } from "../integration/aws/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 20);
const RATE = Number(process.env.CHAOS_FAULT_RATE ?? 0.15);

test(
  `${SERVICES} Services converge while ${RATE * 100}% of cloud calls fail, stall or drop`,
  { timeout: 600_000 },
  async ({ cluster, aws }) => {
    await awsWorld(cluster, aws, 2);
    const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!);
    cluster.defer(() => proxy.close());
    const seed = Number(process.env.CHAOS_SEED ?? 7);
    proxy.setRandomFaults({
      rate: RATE,
      kinds: ["throttle", "unavailable", "slow", "drop"],
      slowMs: 1500,
      seed,
    });
    const provider = new AwsProvider({ clusterName: cluster.namespace, endpoint: proxy.url });
    await startPortico(cluster, { workers: 8 }, { provider });
    const names = Array.from({ length: SERVICES }, (_, i) => `svc-${i}`);
    await Promise.all(names.map((n) => cluster.createService(n, lbService())));
    await waitFor(
      "every Service to get its hostname",
      async () =>
        (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items.every(
          (s) => s.status?.loadBalancer?.ingress?.[0]?.hostname,
        ),
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    proxy.setRandomFaults(undefined);
    const inv = await inventory(aws);
    expect(
      inv.loadBalancers.map((lb) => lb.tags["portico.io/service"]!.split("/")[1]).sort(),
      `seed ${seed}`,
    ).toEqual([...names].sort());
    expect(inv.targetGroups, `seed ${seed}`).toHaveLength(SERVICES);
    expect(inv.securityGroups, `seed ${seed}`).toHaveLength(SERVICES);
    for (const tg of inv.targetGroups) expect(tg.targets).toHaveLength(2);
    const requests = [...proxy.seen.values()].reduce((a, b) => a + b, 0);
    const faults = [...proxy.injected.values()].reduce((a, b) => a + b, 0);
    console.log(
      `cloud faults: ${JSON.stringify(Object.fromEntries(proxy.injected))}; ${requests} requests for ${SERVICES} Services`,
    );
    expect(faults).toBeGreaterThan(0);
    // No storm: about 14 calls make a Service; retries of the injected faults add a few more each, not hundreds.
    expect(requests / SERVICES).toBeLessThan(60);
  },
);
