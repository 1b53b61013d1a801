// A Service whose traffic only the cluster can unblock (no ready endpoint) is not looked at again on a timer: the
// EndpointSlice watch brings it back when an endpoint arrives. Looking again with backoff is for what the cloud
// alone can change (targets in their first health checks), so Services without pods no longer poll their target
// health for ever, nor, after a restart, all at the same moments ahead of users' changes.
import { SERVING_CONDITION } from "../../../controller/status.ts";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { expect, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "./fixtures.ts";

async function serving(cluster: TestCluster, name: string) {
  const svc = await cluster.getService(name);
  return svc.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
}

test("a Service with no ready endpoint is not polled; one whose targets wait for their first checks is, and the endpoint's arrival is seen at once", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients(),
    defaultScheme: "internal",
  });
  // Every pass the controller makes, by Service name.
  const passes = new Map<string, number>();
  const ensure = provider.ensure.bind(provider);
  provider.ensure = (intent, context) => {
    passes.set(intent.service.name, (passes.get(intent.service.name) ?? 0) + 1);
    return ensure(intent, context);
  };
  await startPortico(cluster, {}, { provider });

  await cluster.createService("empty", lbService(undefined, { selector: { app: "empty" } }));
  await waitForHostname(cluster, "empty");
  await waitFor(
    "empty: Serving False, NoReadyEndpoints",
    async () => (await serving(cluster, "empty"))?.reason === "NoReadyEndpoints",
  );
  const emptyPasses = passes.get("empty");

  // Made after it, so its first look again comes later than the empty one's would have: its targets are new, in
  // their first checks (Serving Unknown), and only that look sees them healthy.
  await cluster.createEndpointSlice(
    "pending",
    [{ ip: "10.0.0.60", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("pending", lbService(undefined, { selector: { app: "pending" } }));
  await waitForHostname(cluster, "pending");
  await waitFor("pending: Serving True", async () => (await serving(cluster, "pending"))?.status === "True");
  expect(passes.get("pending")).toBeGreaterThanOrEqual(2);
  expect(passes.get("empty")).toBe(emptyPasses);

  // The cluster changes: the watch brings the empty Service back, and it serves.
  await cluster.createEndpointSlice(
    "empty",
    [{ ip: "10.0.0.61", nodeName: world.nodes[1] }],
    [{ name: "http", port: 8080 }],
  );
  await waitFor("empty: Serving True", async () => (await serving(cluster, "empty"))?.status === "True");
});
