// Readiness gates on AWS ip targets: a pod that waits only for its gate is registered, and its gate opens once
// ELBv2 reports it healthy — not before. The targets' health comes from a proxy in front of the emulator that
// answers DescribeTargetHealth as the test says (the emulator calls every target healthy at once).
import type { V1Pod } from "@kubernetes/client-node";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { startHealthReport } from "../../harness/cloudEdge/healthReport.ts";
import type { TargetState } from "../../harness/cloudEdge/checkPlan.ts";
import { gate, gatedPodOn, gateOpened } from "../../harness/gatedPods.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };

test("a pod waiting for its gate is registered, and the gate opens only once ELBv2 reports it healthy", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const node = world.nodes[0]!;
  // What ELBv2 says of each pod (by address); asked: how often the controller looked at a target's health.
  const health = new Map<string, TargetState>([["10.0.0.10", "healthy"]]);
  const asked = new Map<string, number>();
  const report = await startHealthReport(process.env.AWS_ENDPOINT_URL!, {
    stateOfTarget: (_group, id) => {
      asked.set(id, (asked.get(id) ?? 0) + 1);
      return health.get(id) ?? "initial";
    },
    drainingIn: () => [],
  });
  cluster.defer(() => report.close());
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients({ endpoint: `http://127.0.0.1:${report.port}` }),
  });
  const controller = await startPortico(cluster, {}, { provider });
  // The Service first, as the webhook needs it to give pods their gates.
  await cluster.createService("web", lbService(), IP);

  const old = await gatedPodOn(cluster, "old", node, "10.0.0.10", { containersReady: true, gateOpen: true });
  const fresh = await gatedPodOn(cluster, "new", node, "10.0.0.11", {
    containersReady: true,
    gateOpen: false,
  });
  const starting = await gatedPodOn(cluster, "starting", node, "10.0.0.12", {
    containersReady: false,
    gateOpen: false,
  });
  const ref = (p: V1Pod) => ({ name: p.metadata!.name!, uid: p.metadata!.uid! });
  await cluster.createEndpointSlice(
    "web",
    [
      { ip: "10.0.0.10", nodeName: node, pod: ref(old) },
      { ip: "10.0.0.11", nodeName: node, ready: false, serving: false, pod: ref(fresh) },
      { ip: "10.0.0.12", nodeName: node, ready: false, serving: false, pod: ref(starting) },
    ],
    [{ name: "http", port: 8080 }],
  );
  await waitForHostname(cluster, "web");
  // The pod whose containers are ready is a target although not Ready; the one still starting is not.
  const targets = async () => (await inventory(aws)).targetGroups[0]?.targets;
  await waitFor("the waiting pod registered", async () =>
    (await targets())?.includes("10.0.0.11:8080") ? true : undefined,
  );
  expect(await targets()).toEqual(["10.0.0.10:8080", "10.0.0.11:8080"]);

  // While ELBv2 holds it in initial, the controller keeps looking and the gate stays closed.
  // (A look every 5 s, each a pass of its own: on a loaded machine that can take a while.)
  await waitFor(
    "the controller to look at the new target's health twice",
    () => Promise.resolve((asked.get("10.0.0.11") ?? 0) >= 2 ? true : undefined),
    { timeoutMs: 60_000 },
  );
  expect(await gate(cluster, "new")).toBeUndefined();

  health.set("10.0.0.11", "healthy");
  const opened = await gateOpened(cluster, "the gate to open", "new");
  expect(opened.reason).toBe("TargetHealthy");
  const counted = await controller.metrics.gatesOpened.get();
  expect(counted.values).toEqual([{ labels: { reason: "TargetHealthy" }, value: 1 }]);
  expect(opened.message).toMatch(/reports 10\.0\.0\.11 healthy/);
  // The pod still starting stays out of it: neither registered nor given an open gate.
  expect(await gate(cluster, "starting")).toBeUndefined();
  expect(await targets()).not.toContain("10.0.0.12:8080");
});

test("a gate nothing can open is opened: the Service sends to nodes, or is no Service of Portico's", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const node = world.nodes[0]!;
  await startPortico(cluster);
  // Instance targets: the NLB checks nodes, and says nothing of the pod.
  await cluster.createService("nodes", lbService());
  const pod = await gatedPodOn(
    cluster,
    "behind-nodes",
    node,
    "10.0.0.21",
    { containersReady: true, gateOpen: false },
    "nodes",
  );
  await cluster.createEndpointSlice(
    "nodes",
    [
      {
        ip: "10.0.0.21",
        nodeName: node,
        ready: false,
        serving: false,
        pod: { name: "behind-nodes", uid: pod.metadata!.uid! },
      },
    ],
    [{ name: "http", port: 8080 }],
  );
  const opened = await gateOpened(
    cluster,
    "the gate behind instance targets to open",
    "behind-nodes",
    "nodes",
  );
  expect(opened.reason).toBe("NoPodHealth");

  // A pod made for a Service that is gone (or is no LoadBalancer): its gate opens once its containers are ready.
  await gatedPodOn(cluster, "orphan", node, "10.0.0.22", { containersReady: true, gateOpen: false }, "gone");
  const released = await gateOpened(cluster, "the gate of a Service that is gone to open", "orphan", "gone");
  expect(released.reason).toBe("NoLoadBalancer");
});
