// What a no-change resync of many Services costs in ARM: the reconciles that run together share their reads
// (one list of load balancers, one of public IPs, one read of the security group), and nothing is written.
import { buildIntent } from "../../../controller/intent.ts";
import { AZURE_CLASS, expect, test } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, waitForIP } from "./fixtures.ts";

const SERVICES = 24;
/** Reads of one observation: the load balancers listed, the public IPs listed, the security group read. */
const OBSERVATION = 3;

test(`a no-change resync of ${SERVICES} Services writes nothing and costs one shared observation, not one per Service`, async ({
  cluster,
  azure,
}) => {
  await azureWorld(cluster, azure, 2);
  const controller = await startPortico(cluster, { provider: "azure", workers: 8 });
  const names = Array.from({ length: SERVICES }, (_, i) => `s${i}`);
  for (const [i, name] of names.entries())
    await cluster.createService(name, lbService([{ name: "http", port: 80 + i, targetPort: 8080 }]));
  for (const name of names) await waitForIP(cluster, name);
  // Only the resync below talks to ARM from here on.
  await controller.stop();
  const nodes = (await cluster.core.listNode({ labelSelector: cluster.nodeSelector })).items;
  const intents = await Promise.all(
    names.map(async (name) => buildIntent(await cluster.getService(name), nodes, [], AZURE_CLASS)),
  );
  await azure.clearRequests();
  const results = await Promise.all(intents.map((intent) => controller.provider.ensure(intent)));
  expect(results.map((r) => r.changes)).toEqual(names.map(() => []));
  expect(results.every((r) => r.ingress.length === 1)).toBe(true);
  const counts = await azure.requestCounts();
  const writes = Object.entries(counts).filter(([op]) => /^(PUT|PATCH|DELETE) /.test(op));
  expect(writes).toEqual([]);
  const reads = Object.entries(counts)
    .filter(([op]) => !/ (token|discovery)$/.test(op))
    .reduce((n, [, c]) => n + c, 0);
  // Reconciles arriving together share one observation: it starts once all of them wait for it.
  expect(reads).toBeLessThanOrEqual(OBSERVATION);
  expect(counts["GET loadBalancers (list)"]).toBe(1);
});
