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
