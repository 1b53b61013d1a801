// Endpoint churn and no-change reconciles read only the targets while a recent full observation stands (and, past
// its TTL, while the account's listings confirm it, which a background pass asks and a user's pass only after
// longer); drift made outside Portico is still found, where the listings show it at the next pass that asks them,
// otherwise at the latest when that observation expires.
import {
  DeleteListenerCommand,
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeTargetGroupsCommand,
  ModifyTargetGroupCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import type { TestCluster } from "../../harness/index.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, test, waitFor } from "../../harness/index.ts";
import type { Controller } from "../../../controller/app.ts";
import { startPortico } from "../../harness/controller.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { awsWorld, intentFor, lbService, waitForHostname } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };

async function setEndpoints(cluster: TestCluster, ips: string[]): Promise<void> {
  const [slice] = (
    await cluster.discovery.listNamespacedEndpointSlice({
      namespace: cluster.namespace,
      labelSelector: "kubernetes.io/service-name=web",
    })
  ).items;
  await cluster.discovery.replaceNamespacedEndpointSlice({
    name: slice!.metadata!.name!,
    namespace: cluster.namespace,
    body: { ...slice!, endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })) },
  });
}

async function startWeb(cluster: TestCluster, ttlMs: number, fullPeriodMs = ttlMs): Promise<Controller> {
  const controller = await startPortico(cluster, {
    settings: { defaultScheme: "internal", observationTtlMs: ttlMs, fullObservationPeriodMs: fullPeriodMs },
  });
  await cluster.createEndpointSlice("web", [{ ip: "10.0.0.10" }], [{ name: "http", port: 8080 }]);
  await cluster.createService("web", lbService(), IP);
  await waitForHostname(cluster, "web");
  return controller;
}

const targets = async (aws: Parameters<typeof inventory>[0]) =>
  (await inventory(aws)).targetGroups.flatMap((tg) => tg.targets).join();

test("after one full observation, endpoint changes cost one target read and one write", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const controller = await startWeb(cluster, 60_000);
  // The first change after the creation observes everything and keeps that observation.
  await setEndpoints(cluster, ["10.0.0.10", "10.0.0.11"]);
  await waitFor("the second target", async () => (await targets(aws)) === "10.0.0.10:8080,10.0.0.11:8080");
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const calls = (controller.provider as AwsProvider).clients.calls;
  const before = new Map(calls);

  await setEndpoints(cluster, ["10.0.0.10", "10.0.0.11", "10.0.0.12"]);
  await waitFor("the third target", async () => (await targets(aws)).includes("10.0.0.12:8080"));
  await setEndpoints(cluster, ["10.0.0.12"]);
  await waitFor("the first two to drain", async () => (await targets(aws)) === "10.0.0.12:8080");
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);

  const made = Object.fromEntries(
    [...calls.entries()]
      .map(([op, n]): [string, number] => [op, n - (before.get(op) ?? 0)])
      .filter(([, n]) => n !== 0),
  );
  expect(made).toEqual({
    "elbv2:DescribeTargetHealth": 2,
    "elbv2:RegisterTargets": 1,
    "elbv2:DeregisterTargets": 1,
    // The new pod IP's network interface is looked up once, for its security group (backend rules).
    "ec2:DescribeNetworkInterfaces": 1,
  });
});

test("a listener deleted outside Portico (which no listing shows) comes back once the reused observation expires", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  const controller = await startWeb(cluster, 2000);
  await setEndpoints(cluster, ["10.0.0.10", "10.0.0.11"]);
  await waitFor("the second target", async () => (await targets(aws)) === "10.0.0.10:8080,10.0.0.11:8080");
  const [lb] = (await inventory(aws)).loadBalancers;
  const listeners = async () =>
    (await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb!.arn }))).Listeners ?? [];
  await aws.elbv2.send(new DeleteListenerCommand({ ListenerArn: (await listeners())[0]!.ListenerArn }));

  await sleep(2000);
  controller.manager.queue.add(`${cluster.namespace}/web`);
  await waitFor("the listener to be made again", async () => (await listeners()).length === 1);
  expect((await listeners())[0]!.Port).toBe(80);
});

test("a target group deleted outside Portico is made again by the next endpoint change", async ({
  cluster,
  aws,
}) => {
  await awsWorld(cluster, aws, 1);
  await startWeb(cluster, 60_000);
  await setEndpoints(cluster, ["10.0.0.10", "10.0.0.11"]);
  await waitFor("the second target", async () => (await targets(aws)) === "10.0.0.10:8080,10.0.0.11:8080");
  const { loadBalancers, targetGroups } = await inventory(aws);
  const listener = (
    await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: loadBalancers[0]!.arn }))
  ).Listeners![0]!;
  await aws.elbv2.send(new DeleteListenerCommand({ ListenerArn: listener.ListenerArn }));
  await aws.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: targetGroups[0]!.arn }));

  await setEndpoints(cluster, ["10.0.0.12"]);
  await waitFor(
    "a new target group with the new target",
    async () => (await targets(aws)) === "10.0.0.12:8080",
  );
  const after = await inventory(aws);
  expect(after.targetGroups).toHaveLength(1);
  expect(after.targetGroups[0]!.arn).not.toBe(targetGroups[0]!.arn);
  expect(after.loadBalancers[0]!.listeners).toHaveLength(1);
});

test("past the TTL a user's pass reads only its targets; a background pass also asks the account's listings, which confirm the observation, and drift they show is put right", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const provider = new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients(),
    observationTtlMs: 1,
    fullObservationPeriodMs: 600_000,
  });
  const web = intentFor(world, "web");
  // What the creation wrote is kept as the Service's observation; the next pass (confirmed) reads targets alone.
  await provider.ensure(web);
  await provider.ensure(web);
  const callsDuring = async (fn: () => Promise<unknown>) => {
    const before = new Map(provider.clients.calls);
    await fn();
    return Object.fromEntries(
      [...provider.clients.calls]
        .map(([op, n]): [string, number] => [op, n - (before.get(op) ?? 0)])
        .filter(([, n]) => n > 0),
    );
  };
  await sleep(5);
  // A pass someone waits for (an endpoint change) trusts it for longer (providers/aws/state/cacheAge.ts): the targets alone.
  expect(await callsDuring(() => provider.ensure(web))).toEqual({ "elbv2:DescribeTargetHealth": 1 });
  // The resync's pass asks the listings (one page each here), which confirm it: the targets' health besides.
  expect(await callsDuring(() => provider.ensure(web, { background: true }))).toEqual({
    "elbv2:DescribeLoadBalancers": 1,
    "elbv2:DescribeTargetGroups": 1,
    "elbv2:DescribeTargetHealth": 1,
  });
  // A health check changed outside Portico shows in the listing: observed in full, and put back.
  const tg = (await inventory(aws)).targetGroups[0]!;
  await aws.elbv2.send(
    new ModifyTargetGroupCommand({ TargetGroupArn: tg.arn, HealthCheckIntervalSeconds: 30 }),
  );
  await sleep(5);
  const calls = await callsDuring(() => provider.ensure(web, { background: true }));
  expect(calls).toMatchObject({ "tagging:GetResources": 1, "elbv2:ModifyTargetGroup": 1 });
  const described = await aws.elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [tg.arn] }));
  expect(described.TargetGroups![0]!.HealthCheckIntervalSeconds).toBe(10);
});

test("after a restart, full observations take every Service's load balancer and target groups from the account's listings: one read of each for all", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const services = ["a", "b", "c"].map((name) => intentFor(world, name));
  const first = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  for (const s of services) await first.ensure(s);
  // A new controller process: nothing kept.
  const restarted = new AwsProvider({ clusterName: cluster.namespace, clients: createAwsClients() });
  for (const s of services) expect((await restarted.ensure(s)).changes).toEqual([]);
  const calls = Object.fromEntries(restarted.clients.calls);
  expect(calls).toMatchObject({
    "tagging:GetResources": 1,
    "elbv2:DescribeLoadBalancers": 1,
    "elbv2:DescribeTargetGroups": 1,
    // What no listing holds is still read per load balancer and target group.
    "elbv2:DescribeListeners": 3,
    "elbv2:DescribeTargetHealth": 3,
  });
});
