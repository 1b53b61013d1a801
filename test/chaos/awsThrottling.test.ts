// AWS's request throttling, emulated with AWS's own bucket figures (test/harness/awsThrottle.ts), scaled down
// so that a few Services meet it, and with part of every bucket reserved for the rest of the account: every
// Service converges, none is told of an error, and the log says how many throttled answers Portico got.
import { AwsProvider } from "../../providers/aws/provider.ts";
import { expect, readyCondition, test, waitFor } from "../harness/index.ts";
import { startPortico } from "../harness/controller.ts";
import { startFaultProxy } from "../harness/faultProxy.ts";
import { awsWorld, lbService, serviceEvents } from "../integration/aws/fixtures.ts";
import { inventory } from "../integration/aws/inventory.ts";

const SERVICES = Number(process.env.CHAOS_SERVICES ?? 8);
// A fifth of AWS's figures (ELBv2 writes: 4 tokens refilling 0.6/s) and 30% of that kept by "others".
const SCALE = Number(process.env.CHAOS_THROTTLE_SCALE ?? 0.2);
const RESERVE = Number(process.env.CHAOS_THROTTLE_RESERVE ?? 0.3);

test(
  `${SERVICES} Services converge under AWS's throttling (scaled ×${SCALE}, ${RESERVE * 100}% reserved)`,
  { timeout: 900_000 },
  async ({ cluster, aws }) => {
    const world = await awsWorld(cluster, aws, 2);
    const proxy = await startFaultProxy(process.env.AWS_ENDPOINT_URL!, {
      throttle: { scale: SCALE, reserve: RESERVE },
    });
    cluster.defer(() => proxy.close());
    // The rate limiter knows AWS's figures; scaled down here, it is told the scale (a real account's figures
    // are published), and learns the reserve from throttles.
    const provider = new AwsProvider({
      clusterName: cluster.namespace,
      endpoint: proxy.url,
      rateLimit: { share: Math.min(1, SCALE) },
    });
    const seenByPortico = new Map<string, number>();
    provider.clients.onCall((_service, operation, _outcome, code) => {
      if (code && /Throttl|RequestLimitExceeded/.test(code))
        seenByPortico.set(operation, (seenByPortico.get(operation) ?? 0) + 1);
    });
    await startPortico(cluster, { workers: 8 }, { provider });
    const names = Array.from({ length: SERVICES }, (_, i) => `svc-${i}`);
    // Each with a ready endpoint: a Service with none is told so with a Warning, which is not what is tested here.
    await Promise.all(
      names.map((n, i) =>
        cluster.createEndpointSlice(
          n,
          [{ ip: `10.0.0.${100 + i}`, nodeName: world.nodes[0] }],
          [{ name: "http", port: 8080 }],
        ),
      ),
    );
    const started = performance.now();
    await Promise.all(names.map((n) => cluster.createService(n, lbService())));
    await waitFor(
      "every Service to be ready with its hostname",
      async () => {
        const items = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items;
        const ready = await Promise.all(
          items.map(async (s) => (await readyCondition(cluster, s.metadata!.name!))?.status === "True"),
        );
        return items.every((s, i) => s.status?.loadBalancer?.ingress?.[0]?.hostname && ready[i]);
      },
      { timeoutMs: 800_000, intervalMs: 1000 },
    );
    const seconds = (performance.now() - started) / 1000;
    const throttle = proxy.throttle!;
    const floor = throttle.floor();
    proxy.setThrottle(undefined);

    const inv = await inventory(aws);
    expect(inv.loadBalancers.map((lb) => lb.tags["portico.io/service"]!.split("/")[1]).sort()).toEqual(
      [...names].sort(),
    );
    expect(inv.targetGroups).toHaveLength(SERVICES);
    for (const tg of inv.targetGroups) expect(tg.targets).toHaveLength(2);
    // Throttling is the cloud asking to slow down, not a failure: users are told nothing of it. NoReadyEndpoints
    // is left out: a Service's watch event may reach the controller before its EndpointSlice's, and then it
    // rightly says so for a moment (the set-up's race, not throttling's).
    for (const n of names)
      expect(
        (await serviceEvents(cluster, n)).filter(
          (e) => e.type === "Warning" && e.reason !== "NoReadyEndpoints",
        ),
        `Warnings on ${n}`,
      ).toEqual([]);

    const throttled = Object.fromEntries(
      [...throttle.counts].filter(([, c]) => c.throttled > 0).map(([b, c]) => [b, c.throttled]),
    );
    const admitted = [...throttle.counts.values()].reduce((n, c) => n + c.admitted, 0);
    console.log(
      `${SERVICES} Services under throttling: converged in ${seconds.toFixed(1)} s; the buckets' floor ` +
        `${floor.seconds.toFixed(1)} s (${floor.bucket ?? "none binding"}); ${admitted} calls admitted, ` +
        `${throttle.throttled()} throttled answers ${JSON.stringify(throttled)}; ` +
        `Portico saw ${[...seenByPortico.values()].reduce((a, b) => a + b, 0)}`,
    );
    // The emulated throttle answered in AWS's shapes, and the SDK read every one of them as throttling.
    expect([...seenByPortico.values()].reduce((a, b) => a + b, 0)).toBe(throttle.throttled());
  },
);
