// ip targets follow the EndpointSlices: ready endpoints are registered, terminating ones drain.
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };

test("ready endpoints are targets on their own target port; terminating ones are deregistered to drain", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  const node = world.nodes[0]!;
  const slice = await cluster.createEndpointSlice(
    "web",
    [
      { ip: "10.0.0.10", nodeName: node },
      { ip: "10.0.0.11", nodeName: node },
      { ip: "10.0.0.12", nodeName: node, ready: false, serving: false },
    ],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService(undefined), IP);
  await waitForHostname(cluster, "web");
  const targets = async () => (await inventory(aws)).targetGroups[0]!.targets;
  expect(await targets()).toEqual(["10.0.0.10:8080", "10.0.0.11:8080"]);

  // A rolling update: .11 terminates (still serving), .12 becomes ready.
  await cluster.discovery.replaceNamespacedEndpointSlice({
    name: slice.metadata!.name!,
    namespace: cluster.namespace,
    body: {
      ...slice,
      endpoints: [
        {
          addresses: ["10.0.0.10"],
          nodeName: node,
          conditions: { ready: true, serving: true, terminating: false },
        },
        {
          addresses: ["10.0.0.11"],
          nodeName: node,
          conditions: { ready: false, serving: true, terminating: true },
        },
        {
          addresses: ["10.0.0.12"],
          nodeName: node,
          conditions: { ready: true, serving: true, terminating: false },
        },
      ],
    },
  });
  await waitFor(
    "the terminating endpoint to drain and the new one to serve",
    async () => (await targets()).join() === "10.0.0.10:8080,10.0.0.12:8080",
  );
});

test("when every endpoint is terminating, the serving ones keep their traffic rather than leaving none", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.20", nodeName: world.nodes[0], ready: false, serving: true, terminating: true }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService(undefined), IP);
  await waitForHostname(cluster, "web");
  expect((await inventory(aws)).targetGroups[0]!.targets).toEqual(["10.0.0.20:8080"]);
});

test("endpoints spread over several slices and a named target port resolve per slice", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await cluster.createService("web", lbService([{ name: "http", port: 80, targetPort: "web" }]), IP);
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.30", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.31", nodeName: world.nodes[0] }],
    [{ name: "http", port: 9090 }],
  );
  await waitFor(
    "both endpoints registered",
    async () => (await inventory(aws)).targetGroups[0]?.targets.length === 2,
  );
  expect((await inventory(aws)).targetGroups[0]!.targets).toEqual(["10.0.0.30:8080", "10.0.0.31:9090"]);
});

test("Local instance targets: a node whose every endpoint is terminating drains out of the target group, and is registered again once its pods are gone", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await startPortico(cluster);
  const [n0, n1] = world.nodes as [string, string];
  const slice = await cluster.createEndpointSlice(
    "web",
    [
      { ip: "10.0.0.30", nodeName: n0 },
      { ip: "10.0.0.31", nodeName: n1 },
    ],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService(undefined, { externalTrafficPolicy: "Local" }));
  await waitForHostname(cluster, "web");
  const targets = async () => (await inventory(aws)).targetGroups[0]!.targets.map((t) => t.split(":")[0]);
  const ids = world.instances.map((i) => i.instanceId);
  const both = [...ids].sort();
  await waitFor("both nodes registered", async () => (await targets()).sort().join() === both.join());

  // A rolling update reaches n1: its only pod terminates (serving on while it drains), n0's stays ready.
  let current = slice;
  const replace = async (endpoints: { ip: string; node: string; terminating: boolean }[]) => {
    current = await cluster.discovery.replaceNamespacedEndpointSlice({
      name: slice.metadata!.name!,
      namespace: cluster.namespace,
      body: {
        ...current,
        endpoints: endpoints.map((e) => ({
          addresses: [e.ip],
          nodeName: e.node,
          conditions: { ready: !e.terminating, serving: true, terminating: e.terminating },
        })),
      },
    });
  };
  await replace([
    { ip: "10.0.0.30", node: n0, terminating: false },
    { ip: "10.0.0.31", node: n1, terminating: true },
  ]);
  const n0Instance = ids[world.nodes.indexOf(n0)]!;
  await waitFor(
    "n1 to leave the target group while its pod drains",
    async () => (await targets()).join() === n0Instance,
  );

  // The pod is gone: n1 holds no endpoint and goes back in, failing kube-proxy's check until a pod lands there.
  await replace([{ ip: "10.0.0.30", node: n0, terminating: false }]);
  await waitFor("n1 registered again", async () => (await targets()).sort().join() === both.join());
});
