// Readiness gates on Azure IP-based pools: a pod that waits only for its gate joins the backend pool, and its gate
// opens once the rule's health (ARM's per-rule backend health, as a prober reports it to the emulator) shows it
// Up — not before.
import { PORTICO_ANNOTATIONS } from "../../../providers/annotationKeys/portico.ts";
import type { V1Pod } from "@kubernetes/client-node";
import { gate, gatedPodOn, gateOpened } from "../../harness/gatedPods.ts";
import { AZURE_WORLD, expect, test, waitFor, waitForServing } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, podIP, waitForIP } from "./fixtures.ts";

const IP_TARGETS = { [PORTICO_ANNOTATIONS.targetType]: "ip" };
const HEALTH = "POST loadBalancers/loadBalancingRules/health";

test("a pod waiting for its gate joins the pool, and the gate opens only once the rule reports it Up", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 1);
  const node = world.nodes[0]!;
  // A prober is there from the start, and has judged nobody yet: every member Down.
  await azure.reportRuleHealth({});
  const controller = await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService(), IP_TARGETS);
  const [old, fresh, starting] = [podIP(0), podIP(1), podIP(2)];
  const oldPod = await gatedPodOn(cluster, "old", node, old, { containersReady: true, gateOpen: true });
  const freshPod = await gatedPodOn(cluster, "new", node, fresh, { containersReady: true, gateOpen: false });
  const startingPod = await gatedPodOn(cluster, "starting", node, starting, {
    containersReady: false,
    gateOpen: false,
  });
  const ref = (p: V1Pod) => ({ name: p.metadata!.name!, uid: p.metadata!.uid! });
  await cluster.createEndpointSlice(
    "web",
    [
      { ip: old, nodeName: node, pod: ref(oldPod) },
      { ip: fresh, nodeName: node, ready: false, serving: false, pod: ref(freshPod) },
      { ip: starting, nodeName: node, ready: false, serving: false, pod: ref(startingPod) },
    ],
    [{ name: "http", port: 8080 }],
  );
  await waitForIP(cluster, "web");
  // The pod whose containers are ready is a member although not Ready; the one still starting is not.
  const members = async () => {
    const pools = [];
    for await (const lb of azure.network.loadBalancers.list(AZURE_WORLD.resourceGroup))
      pools.push(...(lb.backendAddressPools ?? []));
    return pools.flatMap((p) => (p.loadBalancerBackendAddresses ?? []).map((a) => a.ipAddress)).sort();
  };
  await waitFor("the waiting pod in the pool", async () =>
    (await members()).includes(fresh) ? true : undefined,
  );
  expect(await members()).toEqual([old, fresh]);
  const rules = [];
  for await (const lb of azure.network.loadBalancers.list(AZURE_WORLD.resourceGroup))
    rules.push(...(lb.loadBalancingRules ?? []).map((r) => r.id!));
  expect(rules).toHaveLength(1);
  const rule = rules[0]!;
  await azure.reportRuleHealth({ [rule]: { [old]: "Up", [fresh]: "Down" } });

  // While the rule reports it Down, the controller keeps asking and the gate stays closed.
  const asked = async () => (await azure.requestCounts())[HEALTH] ?? 0;
  const before = await asked();
  await waitFor(
    "the controller to ask the rule's health twice more",
    async () => ((await asked()) >= before + 2 ? true : undefined),
    { timeoutMs: 60_000 },
  );
  expect(await gate(cluster, "new")).toBeUndefined();

  await azure.reportRuleHealth({ [rule]: { [old]: "Up", [fresh]: "Up" } });
  const opened = await gateOpened(cluster, "the gate to open", "new");
  expect(opened.reason).toBe("TargetHealthy");
  expect(opened.message).toContain(`reports ${fresh} healthy`);
  const counted = await controller.metrics.gatesOpened.get();
  expect(counted.values).toEqual([{ labels: { reason: "TargetHealthy" }, value: 1 }]);
  // The pod still starting stays out: neither a member nor given an open gate.
  expect(await gate(cluster, "starting")).toBeUndefined();
  expect(await members()).not.toContain(starting);
});

test("with no pod waiting, no rule health is read", async ({ cluster, azure }) => {
  const world = await azureWorld(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService(), IP_TARGETS);
  await cluster.createEndpointSlice(
    "web",
    [{ ip: podIP(0), nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await waitForIP(cluster, "web");
  // Evidence the pass that put the pod in the pool is over: its outcome is written on the Service.
  await waitForServing(cluster, "web");
  expect((await azure.requestCounts())[HEALTH]).toBeUndefined();
});
