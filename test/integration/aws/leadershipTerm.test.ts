// A controller that leads again after another did trusts nothing it cached in its earlier term: passes users wait
// for take the cluster's shared reads up to ten minutes old (providers/aws/state/cacheAge.ts), and another leader may have acted in
// between. A new term reads as a restarted controller does, and changes nothing that is right.
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, callsDuring, intentFor } from "./fixtures.ts";

test("a new leadership term reads afresh what the earlier term cached, and changes nothing that is right", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  const web = intentFor(world, "web");
  await provider.ensure(web);
  // Within the term, the next pass reads its targets alone.
  expect(await callsDuring(provider, () => provider.ensure(web))).toEqual({
    "elbv2:DescribeTargetHealth": 1,
  });

  provider.startTerm();
  let changes: string[] = ["not run"];
  const calls = await callsDuring(provider, async () => {
    changes = (await provider.ensure(web)).changes;
  });
  expect(changes).toEqual([]);
  // The subnets, the nodes' groups, the cluster's groups and rules (one read of each, for the shared rules and
  // the groups' index alike) and a full observation, read again.
  expect(calls).toMatchObject({
    "ec2:DescribeSubnets": 1,
    "ec2:DescribeInstances": 1,
    "ec2:DescribeSecurityGroups": 1,
    "ec2:DescribeSecurityGroupRules": 1,
    "elbv2:DescribeListeners": 1,
    "elbv2:DescribeLoadBalancerAttributes": 1,
  });
});
