// A controller started to take over from the AWS Load Balancer Controller serves that controller's Services beside
// its own: the class, and unclassed Services of its type annotation (nlb-ip meaning ip targets); nothing else.
import { LBC_NLB_CLASS } from "../../../providers/classes.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const TYPE = "service.beta.kubernetes.io/aws-load-balancer-type";

test("taking over: the AWS Load Balancer Controller's class and its nlb-ip Services beside Portico's own class, not in-tree ones", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const controller = await startPortico(cluster, { alsoServes: [LBC_NLB_CLASS] });
  await cluster.createEndpointSlice("pods", [{ ip: "10.0.0.60" }], [{ name: "http", port: 8080 }]);
  await cluster.createService("classed", lbService(undefined, { loadBalancerClass: LBC_NLB_CLASS }));
  const unclassed = lbService();
  delete unclassed!.loadBalancerClass;
  await cluster.createService("pods", unclassed, { [TYPE]: "nlb-ip" });
  await cluster.createService("mine", lbService());
  await cluster.createService("intree", unclassed, { [TYPE]: "nlb" });
  await waitForHostname(cluster, "classed");
  await waitForHostname(cluster, "pods");
  await waitForHostname(cluster, "mine");
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);

  const inv = await inventory(aws);
  const served = inv.loadBalancers.map((lb) => lb.tags["portico.io/service"]!.split("/")[1]).sort();
  expect(served).toEqual(["classed", "mine", "pods"]);
  const podGroup = inv.targetGroups.find((tg) => tg.targetType === "ip")!;
  expect(podGroup.targets).toEqual(["10.0.0.60:8080"]);
  expect(inv.targetGroups.filter((tg) => tg.targetType === "instance")).toHaveLength(2);
  expect((await cluster.getService("intree")).status?.loadBalancer?.ingress ?? []).toEqual([]);
  // Each is taken on under its own class (an unclassed one under the controller's).
  const by = async (name: string) =>
    (await cluster.getService(name)).metadata?.annotations?.["portico.io/managed-by"];
  expect([await by("classed"), await by("pods"), await by("mine")]).toEqual([
    LBC_NLB_CLASS,
    "portico.io/aws-nlb",
    "portico.io/aws-nlb",
  ]);
});
