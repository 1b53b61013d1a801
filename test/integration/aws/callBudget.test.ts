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
import { inventory } from "./inventory.ts";

test.for([
  ["", false],
  [", with take-over from LBC on (no read of LBC's of its own)", true],
] as const)(
  "a new single-port Service on a warm controller costs six calls, the writes that make it%s",
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
      // Claimed in this pass, as the controller tells a Service it has just put its finalizer on.
      ingress = (await provider.ensure(intentFor(world, "second", { claimedNow: true }))).ingress;
    });
    expect(ingress).toHaveLength(1);
    expect(calls).toEqual({
      "ec2:CreateSecurityGroup": 1,
      "ec2:AuthorizeSecurityGroupIngress": 1,
      "elbv2:CreateLoadBalancer": 1,
      "elbv2:CreateTargetGroup": 1,
      "elbv2:RegisterTargets": 1,
      "elbv2:CreateListener": 1,
    });
  },
);

// A Service Portico has served before (its finalizer is on) is looked for first: the name is the strongly
// consistent check that no load balancer exists yet (it answers "not found"), however the listings lag.
test("a Service already claimed is looked for before anything is made: its name checked", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  await provider.ensure(intentFor(world, "first"));
  const calls = await callsDuring(
    provider,
    () => provider.ensure(intentFor(world, "second")),
    /^(tagging|elbv2|ec2):(Get|Describe)/,
  );
  expect(calls).toEqual({ "elbv2:DescribeLoadBalancers": 1 });
});

// Nothing is read for a Service claimed in this pass; should its finalizer have been taken off by hand while its
// load balancer stood, the pass that believes it new makes no second one (the names are taken, by the Service's
// own resources), and the next pass, with the finalizer on, finds and keeps what exists.
test("a Service claimed again after its finalizer was removed by hand keeps its one load balancer", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  const service = intentFor(world, "again");
  const made = await provider.ensure(service);
  const again = await provider.ensure({ ...service, claimedNow: true }).then(
    (r) => r.ingress,
    (err: Error) => err.message,
  );
  const next = await provider.ensure(service);
  expect(next.ingress).toEqual(made.ingress);
  expect(next.changes).toEqual([]);
  const lbs = (await inventory(aws)).loadBalancers.filter(
    (lb) => lb.tags["portico.io/service-uid"] === service.service.uid,
  );
  expect(lbs).toHaveLength(1);
  // The pass that believed it new ended with the same address: ELBv2 answers a creation equal to what exists with
  // what exists, and the Service's own security group, found taken by name, is its own by its tags.
  expect(again).toEqual(made.ingress);
});

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
  // Made as the controller makes a new Service: claimed in its first pass, planned against nothing.
  await provider.ensure({ ...second, claimedNow: true });
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
// the first Service reads none of them again. What a cold controller reads once is left: subnets and the nodes'
// groups; being new, the Service itself has nothing to look for.
test("the first Service after the start-up orphan collection reads none of the cluster's groups or rules again", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  const provider = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  expect(await provider.ownedServices()).toEqual([]);
  let result: Awaited<ReturnType<AwsProvider["ensure"]>> | undefined;
  const calls = await callsDuring(provider, async () => {
    result = await provider.ensure(intentFor(world, "first", { claimedNow: true }));
  });
  // It made the shared group, its rule and its own load balancer: it did look.
  expect(result?.ingress).toHaveLength(1);
  expect(result?.changes.some((c) => c.startsWith("admit the shared backend group"))).toBe(true);
  expect(calls).toEqual({
    "ec2:DescribeSubnets": 1,
    "ec2:DescribeInstances": 1,
    "ec2:CreateSecurityGroup": 2,
    "ec2:AuthorizeSecurityGroupIngress": 2,
    "elbv2:CreateLoadBalancer": 1,
    "elbv2:CreateTargetGroup": 1,
    "elbv2:RegisterTargets": 1,
    "elbv2:CreateListener": 1,
  });
});
