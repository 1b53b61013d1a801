// The Serving condition on Azure, judged from the backend pool and the cluster's endpoints (ARM reports no
// per-backend probe result): a Service without a ready endpoint is made but not serving, and serves once one is.
import { SERVING_CONDITION } from "../../../controller/status.ts";
import { expect, test, waitFor, waitForServing } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { azureWorld, lbService, waitForIP, waitForServiceEvent } from "./fixtures.ts";

test("no ready endpoint: made, not serving, with a Warning; an endpoint arrives: serving, with a Normal Event", async ({
  cluster,
  azure,
}) => {
  const world = await azureWorld(cluster, azure, 2);
  await startPortico(cluster, { provider: "azure" });
  await cluster.createService("web", lbService());
  await waitForIP(cluster, "web");
  const down = await waitFor("Serving False", async () => {
    const c = (await cluster.getService("web")).status?.conditions?.find((x) => x.type === SERVING_CONDITION);
    return c?.status === "False" ? c : undefined;
  });
  expect(down.reason).toBe("NoReadyEndpoints");
  // Events follow the condition they tell of (the controller writes the condition first).
  const warning = await waitForServiceEvent(cluster, "web", "Warning", "NoReadyEndpoints");
  expect(warning.message).toBe(down.message);

  await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.64.10", nodeName: world.nodes[0] }],
    [{ name: "http", port: 8080 }],
  );
  await waitForServing(cluster, "web");
  const up = (await cluster.getService("web")).status?.conditions?.find((x) => x.type === SERVING_CONDITION);
  expect(up).toMatchObject({ status: "True", reason: "BackendsReady" });
  expect(up?.message).toMatch(/^2 of 2 backends should pass their probes/);
  const recovered = await waitForServiceEvent(cluster, "web", "Normal", "BackendsReady");
  expect(recovered.message).toMatch(/^Traffic reaches backends again/);
});
