// Taking over costs nothing for the Services that have nothing of the AWS Load Balancer Controller's: which ones
// have anything is one listing for the cluster, shared like Portico's own, not a read per Service.
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, intentFor } from "./fixtures.ts";

test("with take-over on, a new Service on a warm controller still costs seven calls: no read of LBC's of its own", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients(),
    takeOverLbc: { cluster: cluster.namespace, liveController: () => Promise.resolve(undefined) },
  });
  await provider.ensure(intentFor(world, "first"));
  const before = new Map(provider.clients.calls);
  const result = await provider.ensure(intentFor(world, "second"));
  expect(result.ingress).toHaveLength(1);
  const calls = Object.fromEntries(
    [...provider.clients.calls]
      .map(([op, n]): [string, number] => [op, n - (before.get(op) ?? 0)])
      .filter(([, n]) => n > 0),
  );
  expect(calls).toEqual({
    "elbv2:DescribeLoadBalancers": 1,
    "ec2:CreateSecurityGroup": 1,
    "ec2:AuthorizeSecurityGroupIngress": 1,
    "elbv2:CreateLoadBalancer": 1,
    "elbv2:CreateTargetGroup": 1,
    "elbv2:RegisterTargets": 1,
    "elbv2:CreateListener": 1,
  });
});
