// What a new Service costs once the controller is warm: the listings and indexes it shares with every other
// Service are already read, so only the name check and the writes that make the load balancer are its own.
// Taking over from the AWS Load Balancer Controller costs nothing more for a Service with nothing of LBC's: which
// ones have anything is one listing for the cluster, shared like Portico's own, not a read per Service.
import { CreateTargetGroupCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, callsDuring, intentFor } from "./fixtures.ts";

test.for([
  ["", false],
  [", with take-over from LBC on (no read of LBC's of its own)", true],
] as const)(
  "a new single-port Service on a warm controller costs seven calls: a name check and six writes%s",
  async ([, takeOver], { cluster, aws }) => {
    const world = await awsWorld(cluster, aws, 2);
    const provider = new AwsProvider({
      clusterName: cluster.namespace,
      clients: createAwsClients(),
      ...(takeOver
        ? { takeOverLbc: { cluster: cluster.namespace, liveController: () => Promise.resolve(undefined) } }
        : {}),
    });
    await provider.ensure(intentFor(world, "first"));
    let ingress: unknown[] = [];
    const calls = await callsDuring(provider, async () => {
      ingress = (await provider.ensure(intentFor(world, "second"))).ingress;
    });
    expect(ingress).toHaveLength(1);
    expect(calls).toEqual({
      // The name is the strongly consistent check that no load balancer exists yet (it answers "not found").
      "elbv2:DescribeLoadBalancers": 1,
      "ec2:CreateSecurityGroup": 1,
      "ec2:AuthorizeSecurityGroupIngress": 1,
      "elbv2:CreateLoadBalancer": 1,
      "elbv2:CreateTargetGroup": 1,
      "elbv2:RegisterTargets": 1,
      "elbv2:CreateListener": 1,
    });
  },
);

// What Portico has just made is known from its own writes: the passes that follow a creation (the controller looks
// again until the targets pass their first health checks) read the targets alone, not the whole load balancer.
test("the passes that follow a new Service's creation cost one call each: its targets' health", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  await provider.ensure(intentFor(world, "first"));
  const second = intentFor(world, "second");
  await provider.ensure(second);
  for (let pass = 0; pass < 2; pass++) {
    let changes: string[] = ["not run"];
    const calls = await callsDuring(provider, async () => {
      changes = (await provider.ensure(second)).changes;
    });
    expect(changes).toEqual([]);
    expect(calls).toEqual({ "elbv2:DescribeTargetHealth": 1 });
  }
});

// A no-change resync is to cost at most 1.5 calls per Service; within the observations' TTL it is one each.
test("a no-change resync of twelve Services looked at together costs one call per Service: its targets' health", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  const services = Array.from({ length: 12 }, (_, i) => intentFor(world, `s${i}`));
  await Promise.all(services.map((s) => provider.ensure(s)));
  let changes: string[] = ["not run"];
  const calls = await callsDuring(provider, async () => {
    const results = await Promise.all(services.map((s) => provider.ensure(s, { background: true })));
    changes = results.flatMap((r) => r.changes);
  });
  expect(changes).toEqual([]);
  expect(calls).toEqual({ "elbv2:DescribeTargetHealth": 12 });
});

// The account's listings are shared by the Services that need them within a minute; one arriving alone after they
// went stale reads itself alone (its tags, its name) rather than the whole account again. The cluster's tags are
// read only when enough Services ask within the minute to pay for their pages: a lone one reads its own.
test("a new Service among many reads its own tags, not the cluster's pages, and once the listings are stale only itself", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  // Six hundred more of the cluster's tagged target groups: its tags would take 6 pages.
  const run = randomBytes(6).toString("hex");
  for (let i = 0; i < 600; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, (_, k) =>
        aws.elbv2.send(
          new CreateTargetGroupCommand({
            Name: `other-${i + k}-${run}`,
            Protocol: "TCP",
            Port: 80,
            VpcId: world.network.vpcId,
            Tags: [{ Key: "portico.io/cluster", Value: cluster.namespace }],
          }),
        ),
      ),
    );
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients(),
    observationTtlMs: 200,
  });
  await provider.ensure(intentFor(world, "first"));
  // Its own tags: one call, not the cluster's six pages.
  expect(provider.clients.calls.get("tagging:GetResources")).toBe(1);
  await sleep(300);
  const read = await callsDuring(
    provider,
    () => provider.ensure(intentFor(world, "second")),
    /^(tagging|elbv2):(Get|Describe)/,
  );
  // Its own tags (one page), and the name check; no page of the account's listings.
  expect(read).toEqual({ "tagging:GetResources": 1, "elbv2:DescribeLoadBalancers": 1 });
});

// Orphan collection reads the cluster's security groups and rules afresh as the controller starts; the shared backend
// group, its range rules and the index of the Services' groups all take them from that read (providers/aws/state/clusterGroups.ts), so
// the first Service reads none of them again. What a cold controller reads once is left: subnets, the nodes' groups,
// the account's listings and the name.
test("the first Service after the start-up orphan collection reads none of the cluster's groups or rules again", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  expect(await provider.ownedServices()).toEqual([]);
  let result: Awaited<ReturnType<AwsProvider["ensure"]>> | undefined;
  const calls = await callsDuring(provider, async () => {
    result = await provider.ensure(intentFor(world, "first"));
  });
  // It made the shared group, its rule and its own load balancer: it did look.
  expect(result?.ingress).toHaveLength(1);
  expect(result?.changes.some((c) => c.startsWith("admit the shared backend group"))).toBe(true);
  expect(calls).toEqual({
    "ec2:DescribeSubnets": 1,
    "ec2:DescribeInstances": 1,
    "elbv2:DescribeLoadBalancers": 2,
    "elbv2:DescribeTargetGroups": 1,
    "tagging:GetResources": 1,
    "ec2:CreateSecurityGroup": 2,
    "ec2:AuthorizeSecurityGroupIngress": 2,
    "elbv2:CreateLoadBalancer": 1,
    "elbv2:CreateTargetGroup": 1,
    "elbv2:RegisterTargets": 1,
    "elbv2:CreateListener": 1,
  });
});
