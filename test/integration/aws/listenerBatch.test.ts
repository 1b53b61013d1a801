// The periodic full observation of settled Services reads their listeners by ARN, many Services' in one call, and
// still finds every drift the per-load-balancer read found: a listener changed, deleted, or added outside Portico.
import {
  CreateListenerCommand,
  CreateTargetGroupCommand,
  DeleteListenerCommand,
  DescribeListenersCommand,
  ModifyListenerCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { setTimeout as sleep } from "node:timers/promises";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, callsDuring, intentFor } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const FULL_PERIOD_MS = 300;

function provider(cluster: string): AwsProvider {
  // Listings trusted for a millisecond: every pass past the period sees the account as it is now.
  return new AwsProvider({
    clusterName: cluster,
    clients: createAwsClients(),
    observationTtlMs: 1,
    fullObservationPeriodMs: FULL_PERIOD_MS,
  });
}

test("past the full-observation period, twelve Services' listeners are read in one call; attributes and health per Service", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const p = provider(cluster.namespace);
  const services = Array.from({ length: 12 }, (_, i) => intentFor(world, `s${i}`));
  await Promise.all(services.map((s) => p.ensure(s)));
  await sleep(FULL_PERIOD_MS + 50);
  let results: Awaited<ReturnType<AwsProvider["ensure"]>>[] = [];
  const calls = await callsDuring(p, async () => {
    results = await Promise.all(services.map((s) => p.ensure(s, { background: true })));
  });
  expect(results.flatMap((r) => r.changes)).toEqual([]);
  // (The account's listings and the security groups are read as any pass reads them; not counted here.)
  expect(calls).toMatchObject({
    "elbv2:DescribeListeners": 1,
    "elbv2:DescribeLoadBalancerAttributes": 12,
    "elbv2:DescribeTargetGroupAttributes": 12,
    "elbv2:DescribeTargetHealth": 12,
  });
});

test("a listener changed or deleted outside Portico is found by the read by ARN and put right", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const p = provider(cluster.namespace);
  const web = intentFor(world, "web", {
    ports: [
      { name: "http", port: 80, protocol: "TCP", nodePort: 30080 },
      { name: "alt", port: 81, protocol: "TCP", nodePort: 30081 },
    ],
  });
  await p.ensure(web);
  const lbArn = (await inventory(aws)).loadBalancers[0]!.arn;
  const listeners = async () =>
    ((await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lbArn }))).Listeners ?? []).sort(
      (a, b) => a.Port! - b.Port!,
    );
  const [http, alt] = await listeners();

  // Moved to another port: the answer by ARN shows it, and the plan moves it back.
  await aws.elbv2.send(new ModifyListenerCommand({ ListenerArn: alt!.ListenerArn, Port: 82 }));
  await sleep(FULL_PERIOD_MS + 50);
  const changed = await callsDuring(p, () => p.ensure(web, { background: true }));
  expect(changed["elbv2:DescribeListeners"]).toBe(1);
  expect((await listeners()).map((l) => l.Port)).toEqual([80, 81]);

  // Deleted: its ARN is missing from the answer, so the load balancer's listeners are read as a whole, and it is
  // made again.
  await aws.elbv2.send(new DeleteListenerCommand({ ListenerArn: http!.ListenerArn }));
  await sleep(FULL_PERIOD_MS + 50);
  const deleted = await callsDuring(p, () => p.ensure(web, { background: true }));
  expect(deleted["elbv2:DescribeListeners"]).toBe(2);
  expect(deleted["elbv2:CreateListener"]).toBe(1);
  expect((await listeners()).map((l) => l.Port)).toEqual([80, 81]);
});

test("a listener added outside Portico, which no read by ARN can see, is found by its target group in the listings", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const p = provider(cluster.namespace);
  const web = intentFor(world, "web");
  await p.ensure(web);
  const lb = (await inventory(aws)).loadBalancers[0]!;
  const foreign = await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: `added-${cluster.namespace}`.slice(0, 32),
      Protocol: "TCP",
      Port: 9000,
      VpcId: world.network.vpcId,
      TargetType: "instance",
    }),
  );
  await aws.elbv2.send(
    new CreateListenerCommand({
      LoadBalancerArn: lb.arn,
      Protocol: "TCP",
      Port: 9000,
      DefaultActions: [{ Type: "forward", TargetGroupArn: foreign.TargetGroups![0]!.TargetGroupArn }],
    }),
  );
  await sleep(FULL_PERIOD_MS + 50);
  const calls = await callsDuring(p, () => p.ensure(web, { background: true }));
  // Read per load balancer, as the first observation did: and the listener Portico's NLB should not have goes.
  expect(calls["elbv2:DescribeListeners"]).toBe(1);
  expect(calls["elbv2:DeleteListener"]).toBe(1);
  const left = await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.arn }));
  expect(left.Listeners!.map((l) => l.Port)).toEqual([80]);
});
