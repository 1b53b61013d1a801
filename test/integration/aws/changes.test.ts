// A Service changes; the NLB follows in place wherever ELBv2 allows it.
import { expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, patchService, serviceEvents, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const TARGET_TYPE = "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type";

test("ports added and removed become listeners and target groups added and removed", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService());
  const hostname = await waitForHostname(cluster, "web");
  await patchService(cluster, "web", {
    spec: {
      ports: [
        { name: "http", port: 80, targetPort: 8080 },
        { name: "https", port: 443, targetPort: 8443 },
      ],
    },
  });
  await waitFor("a listener on 443", async () =>
    (await inventory(aws)).loadBalancers[0]?.listeners.some((l) => l.port === 443),
  );
  let inv = await inventory(aws);
  expect(inv.loadBalancers[0]!.listeners.map((l) => l.port).sort((a, b) => a - b)).toEqual([80, 443]);
  expect(inv.targetGroups).toHaveLength(2);
  expect(inv.securityGroups[0]!.ingress).toEqual(["tcp/443/0.0.0.0/0", "tcp/80/0.0.0.0/0"]);

  await patchService(cluster, "web", { spec: { ports: [{ name: "https", port: 443, targetPort: 8443 }] } });
  await waitFor("only the 443 listener", async () => (await inventory(aws)).targetGroups.length === 1);
  inv = await inventory(aws);
  expect(inv.loadBalancers).toHaveLength(1);
  expect(inv.loadBalancers[0]!.dnsName).toBe(hostname);
  expect(inv.loadBalancers[0]!.listeners.map((l) => l.port)).toEqual([443]);
  expect(inv.securityGroups[0]!.ingress).toEqual(["tcp/443/0.0.0.0/0"]);
});

test("switching instance to ip targets makes a new target group first, then drops the old one", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService());
  const hostname = await waitForHostname(cluster, "web");
  await cluster.createEndpointSlice(
    "web",
    [
      { ip: "10.0.0.50", nodeName: world.nodes[0] },
      { ip: "10.0.1.51", nodeName: world.nodes[0] },
    ],
    [{ name: "http", port: 8080 }],
  );
  await patchService(cluster, "web", { metadata: { annotations: { [TARGET_TYPE]: "ip" } } });
  await waitFor("an ip target group", async () => {
    const inv = await inventory(aws);
    return inv.targetGroups.length === 1 && inv.targetGroups[0]!.targetType === "ip";
  });
  const inv = await inventory(aws);
  expect(inv.targetGroups[0]!.targets).toEqual(["10.0.0.50:8080", "10.0.1.51:8080"]);
  expect(inv.targetGroups[0]!.port).toBe(80);
  expect(inv.loadBalancers[0]!.listeners[0]!.targetGroupArn).toBe(inv.targetGroups[0]!.arn);
  expect(inv.loadBalancers[0]!.dnsName).toBe(hostname);
});

test("a UDP port's node port changes: its listener moves to a new target group at the new port, the old one goes", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const svc = await cluster.createService("dns", lbService([{ name: "dns", port: 53, protocol: "UDP" }]));
  await waitForHostname(cluster, "dns");
  const before = (await inventory(aws)).targetGroups[0]!;
  // A node port no other test's Service holds (they share the apiserver): the apiserver refuses a taken one.
  const nodePort = await waitFor("a free node port taken", async () => {
    const port = 30000 + Math.floor(Math.random() * 2768);
    if (port === svc.spec!.ports![0]!.nodePort) return undefined;
    try {
      await patchService(cluster, "dns", {
        spec: { ports: [{ name: "dns", port: 53, protocol: "UDP", nodePort: port }] },
      });
      return port;
    } catch (err) {
      if (String((err as { body?: unknown }).body ?? err).includes("already allocated")) return undefined;
      throw err;
    }
  });
  // Kubernetes' own "change the type and ports of a UDP service" does this: the listener, still UDP, forwards
  // to a target group at the new node port (a ModifyListener naming UDP was refused by the emulator, so the
  // Service stayed on the old port).
  await waitFor("the listener on a target group at the new node port", async () => {
    const inv = await inventory(aws);
    const group = inv.targetGroups.find((g) => g.arn === inv.loadBalancers[0]?.listeners[0]?.targetGroupArn);
    return inv.targetGroups.length === 1 && group?.port === nodePort;
  });
  const inv = await inventory(aws);
  expect(inv.targetGroups[0]!.arn).not.toBe(before.arn);
  expect(inv.targetGroups[0]!.targets).toEqual([`${world.instances[0]!.instanceId}:${nodePort}`]);
  expect(inv.loadBalancers[0]!.listeners[0]!.protocol).toBe("UDP");
  expect((await serviceEvents(cluster, "dns")).map((e) => e.reason)).not.toContain("SyncLoadBalancerFailed");
});

test("externalTrafficPolicy Local uses kube-proxy's healthCheckNodePort; back to Cluster uses TCP", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const svc = await cluster.createService("web", lbService(undefined, { externalTrafficPolicy: "Local" }));
  await waitForHostname(cluster, "web");
  let inv = await inventory(aws);
  expect(inv.targetGroups[0]!.healthCheck).toEqual({
    protocol: "HTTP",
    port: String(svc.spec!.healthCheckNodePort),
    path: "/healthz",
  });

  await patchService(cluster, "web", { spec: { externalTrafficPolicy: "Cluster" } });
  await waitFor(
    "a TCP health check",
    async () => (await inventory(aws)).targetGroups[0]?.healthCheck.protocol === "TCP",
  );
  inv = await inventory(aws);
  expect(inv.targetGroups).toHaveLength(1);
  expect(inv.targetGroups[0]!.healthCheck).toMatchObject({ protocol: "TCP", port: "traffic-port" });

  const again = await patchService(cluster, "web", { spec: { externalTrafficPolicy: "Local" } });
  await waitFor(
    "the HTTP health check again",
    async () =>
      (await inventory(aws)).targetGroups[0]?.healthCheck.port === String(again.spec!.healthCheckNodePort),
  );
  expect(
    (await serviceEvents(cluster, "web")).filter((e) => e.reason === "UpdatedLoadBalancer").length,
  ).toBeGreaterThanOrEqual(2);
});

test("nodes added, excluded, not ready, doomed, cordoned or deleted are registered and deregistered", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const svc = await cluster.createService("web", lbService());
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  await waitForHostname(cluster, "web");
  const targets = async () => (await inventory(aws)).targetGroups[0]!.targets;
  const more = await aws.createInstances(world.network.subnets[1]!.subnetId, 5);
  const names: string[] = [];
  for (const [i, inst] of more.entries())
    names.push(
      (await cluster.createNode(`extra-${i}`, { providerID: inst.providerID, internalIP: inst.privateIp }))
        .metadata!.name!,
    );
  const all = [...world.instances, ...more].map((i) => `${i.instanceId}:${nodePort}`).sort();
  await waitFor("all six nodes registered", async () => (await targets()).length === 6 && (await targets()));
  expect(await targets()).toEqual(all);

  await cluster.core.patchNode(
    {
      name: names[0]!,
      body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } } },
    },
    mergePatch,
  );
  await cluster.setNodeStatus(names[1]!, { ready: false });
  await cluster.core.patchNode(
    {
      name: names[2]!,
      body: {
        spec: { taints: [{ key: "ToBeDeletedByClusterAutoscaler", effect: "NoSchedule", value: "1" }] },
      },
    },
    mergePatch,
  );
  await cluster.core.deleteNode({ name: names[3]! });
  // Cordoned, as `kubectl drain` does before it evicts the node's pods.
  const cordon = (name: string, unschedulable: boolean) =>
    cluster.core.patchNode({ name, body: { spec: { unschedulable } } }, mergePatch);
  await cordon(names[4]!, true);
  await waitFor("only the original node registered", async () => (await targets()).length === 1);
  const original = [`${world.instances[0]!.instanceId}:${nodePort}`];
  expect(await targets()).toEqual(original);

  // The last node cordoned as well: the cordoned nodes keep the traffic, as no other node could take it.
  await cordon(world.nodes[0]!, true);
  const cordoned = [...original, `${more[4]!.instanceId}:${nodePort}`].sort();
  await waitFor("both cordoned nodes registered", async () => (await targets()).join() === cordoned.join());
  // Once one is back in service, the one still cordoned leaves.
  await cordon(names[4]!, false);
  await waitFor(
    "the uncordoned node alone registered",
    async () => (await targets()).join() === `${more[4]!.instanceId}:${nodePort}`,
  );
});
