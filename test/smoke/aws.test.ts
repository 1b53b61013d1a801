import { DescribeInstancesCommand } from "@aws-sdk/client-ec2";
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  RegisterTargetsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, test } from "../harness/index.ts";

test("an NLB with a target group and a listener, made with the real ELBv2 client, is described back", async ({
  aws,
}) => {
  const network = await aws.createNetwork("smoke");
  const instances = await aws.createInstances(network.subnets[0]!.subnetId, 2);
  const described = await aws.ec2.send(
    new DescribeInstancesCommand({ InstanceIds: instances.map((i) => i.instanceId) }),
  );
  expect(described.Reservations!.flatMap((r) => r.Instances!).length).toBe(2);
  expect(instances[0]!.providerID).toMatch(/^aws:\/\/\/us-east-1[a-z]\/i-[0-9a-f]+$/);

  const lb = await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: "smoke-nlb",
      Type: "network",
      Scheme: "internal",
      Subnets: network.subnets.map((s) => s.subnetId),
      Tags: [{ Key: "portico.io/cluster", Value: "smoke" }],
    }),
  );
  const lbArn = lb.LoadBalancers![0]!.LoadBalancerArn!;
  const tg = await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: "smoke-tg",
      Protocol: "TCP",
      Port: 30080,
      VpcId: network.vpcId,
      TargetType: "instance",
      HealthCheckProtocol: "HTTP",
      HealthCheckPort: "31000",
      HealthCheckPath: "/healthz",
    }),
  );
  const tgArn = tg.TargetGroups![0]!.TargetGroupArn!;
  await aws.elbv2.send(
    new CreateListenerCommand({
      LoadBalancerArn: lbArn,
      Protocol: "TCP",
      Port: 80,
      DefaultActions: [{ Type: "forward", TargetGroupArn: tgArn }],
    }),
  );
  await aws.elbv2.send(
    new RegisterTargetsCommand({
      TargetGroupArn: tgArn,
      Targets: instances.map((i) => ({ Id: i.instanceId, Port: 30080 })),
    }),
  );

  const lbs = await aws.elbv2.send(new DescribeLoadBalancersCommand({ Names: ["smoke-nlb"] }));
  expect(lbs.LoadBalancers![0]).toMatchObject({ Type: "network", Scheme: "internal", VpcId: network.vpcId });
  expect(lbs.LoadBalancers![0]!.DNSName).toContain("smoke-nlb");
  const listeners = await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }));
  expect(listeners.Listeners!.map((l) => [l.Protocol, l.Port, l.DefaultActions![0]!.TargetGroupArn])).toEqual(
    [["TCP", 80, tgArn]],
  );
  const tgs = await aws.elbv2.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: lbArn }));
  expect(tgs.TargetGroups![0]).toMatchObject({
    HealthCheckProtocol: "HTTP",
    HealthCheckPort: "31000",
    HealthCheckPath: "/healthz",
  });
  const health = await aws.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
  expect(health.TargetHealthDescriptions!.map((t) => t.Target!.Id).sort()).toEqual(
    instances.map((i) => i.instanceId).sort(),
  );
});

test("each test starts from an empty AWS account", async ({ aws }) => {
  const lbs = await aws.elbv2.send(new DescribeLoadBalancersCommand({}));
  expect(lbs.LoadBalancers ?? []).toEqual([]);
});
