// Letting a Service go takes back everything Portico wrote on it: the NLB, the finalizer and its marker, the
// ingress and every portico.io/ condition (Serving too, which used to stay "True, TargetsHealthy" for ever). On
// each path by which a Service stops being Portico's: no longer a LoadBalancer, a LoadBalancer of a class Portico
// does not serve, no longer eligible (unclassed, and Portico no longer the default), and its finalizer taken off
// by hand before that.
import type { V1Service } from "@kubernetes/client-node";
import { PORTICO_CONDITIONS } from "../../../controller/status.ts";
import {
  expect,
  test,
  waitFor,
  waitForServing,
  type TestAws,
  type TestCluster,
} from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, patchService, type AwsWorld } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const NOT_A_LOAD_BALANCER = {
  type: "ClusterIP",
  loadBalancerClass: null,
  externalTrafficPolicy: null,
  allocateLoadBalancerNodePorts: null,
};

/** A Service served and serving: its NLB sends to a node with a ready endpoint, Serving True. */
async function served(cluster: TestCluster, world: AwsWorld, spec: V1Service["spec"]): Promise<void> {
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.50", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", spec);
  await waitForServing(cluster, "web");
  const types = (await cluster.getService("web")).status?.conditions?.map((c) => c.type);
  expect(types?.sort()).toEqual([...PORTICO_CONDITIONS].sort());
}

/** Waits for Portico to have let the Service go, then checks nothing of Portico's is left on it or in AWS. */
async function letGo(cluster: TestCluster, aws: TestAws): Promise<void> {
  const svc = await waitFor("Portico to let the Service go", async () => {
    const s = await cluster.getService("web");
    return s.metadata?.annotations?.["portico.io/managed-by"] === undefined ? s : undefined;
  });
  expect(svc.metadata?.finalizers ?? []).toEqual([]);
  expect(svc.status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect((svc.status?.conditions ?? []).filter((c) => c.type.startsWith("portico.io/"))).toEqual([]);
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
}

test("a served Service changed to ClusterIP keeps no portico.io condition", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  await startPortico(cluster);
  await served(cluster, world, lbService());
  await patchService(cluster, "web", { spec: NOT_A_LOAD_BALANCER });
  await letGo(cluster, aws);
});

test("a Service that became a LoadBalancer of another class while no controller ran is let go", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const first = await startPortico(cluster);
  await served(cluster, world, lbService());
  await first.stop();
  // The class of a LoadBalancer cannot change in place: through ClusterIP, as a user would.
  await patchService(cluster, "web", { spec: NOT_A_LOAD_BALANCER });
  await patchService(cluster, "web", {
    spec: { type: "LoadBalancer", loadBalancerClass: "example.com/other-lb" },
  });
  await startPortico(cluster);
  await letGo(cluster, aws);
});

test("an unclassed Service is let go when Portico is no longer the cluster's default", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const first = await startPortico(cluster, { defaultForUnclassed: true });
  await served(cluster, world, lbService(undefined, { loadBalancerClass: undefined }));
  await first.stop();
  await startPortico(cluster, { defaultForUnclassed: false });
  await letGo(cluster, aws);
});

test("a Service whose finalizer was taken off by hand is let go all the same", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  const first = await startPortico(cluster);
  await served(cluster, world, lbService());
  // While no controller runs (a running one would put the finalizer back on a LoadBalancer it serves).
  await first.stop();
  await patchService(cluster, "web", { metadata: { finalizers: null } });
  await patchService(cluster, "web", { spec: NOT_A_LOAD_BALANCER });
  await startPortico(cluster);
  await letGo(cluster, aws);
});
