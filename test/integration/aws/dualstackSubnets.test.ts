// A dualstack NLB needs an IPv6 CIDR block on every one of its subnets: a Service asking for one in subnets without
// is refused with a Warning Event and a False condition naming the annotation and the subnets, found by their role
// tags or named, and nothing is made; subnets that have IPv6 serve it.
import { DescribeLoadBalancersCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, expectRefused, test } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { awsWorld, lbService, waitForHostname, withIpv6 } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const DUALSTACK = { [`${A}ip-address-type`]: "dualstack" };

test("dualstack in discovered or named subnets without IPv6 is refused before anything is made; with IPv6 it is served", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const [a, b] = world.network.subnets.map((s) => s.subnetId).sort();
  await startPortico(cluster);

  await cluster.createService("found", lbService(), DUALSTACK);
  await expectRefused(cluster, "found", {
    reason: "SubnetsWithoutIPv6",
    mentions: [
      `metadata.annotations[${A}ip-address-type]`,
      `subnets ${a}, ${b} (found by their kubernetes.io/role/internal-elb tag) have none`,
      "associate an IPv6 CIDR block",
    ],
  });
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });

  // One of the two named subnets gets IPv6: the other is the one named.
  await withIpv6(aws, world.network.vpcId, [a!]);
  await cluster.createService("named", lbService(), { ...DUALSTACK, [`${A}subnets`]: `${a},${b}` });
  await expectRefused(cluster, "named", {
    reason: "SubnetsWithoutIPv6",
    mentions: [`subnet ${b} (named in ${A}subnets) has none`],
  });
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });

  // Named alone, the subnet with IPv6 serves a dualstack NLB.
  await cluster.createService("served", lbService(), { ...DUALSTACK, [`${A}subnets`]: a! });
  await waitForHostname(cluster, "served");
  const made = await aws.elbv2.send(new DescribeLoadBalancersCommand({}));
  expect(made.LoadBalancers?.map((lb) => lb.IpAddressType)).toEqual(["dualstack"]);
});
