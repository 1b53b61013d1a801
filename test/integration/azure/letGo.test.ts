// Letting a Service go on Azure takes back everything Portico wrote on it: its frontend, rules and public IP, the
// finalizer and its marker, the ingress and every portico.io/ condition (Serving used to stay "True,
// BackendsReady" after the Service became a ClusterIP). The other let-go paths are the controller's, shown on AWS
// (test/integration/aws/letGo.test.ts).
import { PORTICO_CONDITIONS } from "../../../controller/status.ts";
import { expect, test, waitFor, waitForServing } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, patchService } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

test("a served Service changed to ClusterIP keeps no portico.io condition", async ({ cluster, azure }) => {
  const world = await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.64.10", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService());
  await waitForServing(cluster, "web");
  const types = (await cluster.getService("web")).status?.conditions?.map((c) => c.type);
  expect(types?.sort()).toEqual([...PORTICO_CONDITIONS].sort());

  await patchService(cluster, "web", {
    spec: {
      type: "ClusterIP",
      loadBalancerClass: null,
      externalTrafficPolicy: null,
      allocateLoadBalancerNodePorts: null,
    },
  });
  const svc = await waitFor("Portico to let the Service go", async () => {
    const s = await cluster.getService("web");
    return s.metadata?.annotations?.["portico.io/managed-by"] === undefined ? s : undefined;
  });
  expect(svc.metadata?.finalizers ?? []).toEqual([]);
  expect(svc.status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect((svc.status?.conditions ?? []).filter((c) => c.type.startsWith("portico.io/"))).toEqual([]);
  const inv = await inventory(azure);
  expect(inv.loadBalancers.flatMap((lb) => lb.frontends)).toEqual([]);
  expect(inv.publicIps).toEqual([]);
  expect(inv.securityRules).toEqual([]);
});
