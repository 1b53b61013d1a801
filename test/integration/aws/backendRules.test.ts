// The targets' own security groups let the NLB in (as the AWS Load Balancer Controller's backend rules do): only
// Portico's rules are added and revoked, other rules of a shared group are never touched.
import { AuthorizeSecurityGroupIngressCommand, DeleteSecurityGroupCommand } from "@aws-sdk/client-ec2";
import {
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, test, waitFor } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import type { AwsProvider } from "../../../providers/aws/provider.ts";
import {
  awsWorld,
  directProvider,
  intentFor,
  lbService,
  patchService,
  waitForHostname,
  writesDuring,
} from "./fixtures.ts";
import { groupRules, inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const MUTATING = /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;

test("instance targets: the nodes' cluster-tagged group admits the NLB's group on the node and health-check ports, apart per Service", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  let otherGroup = "";
  await awsWorld(cluster, aws, 2, {
    nodeSecurityGroups: async (vpcId) => {
      nodeGroup = await aws.createSecurityGroup(vpcId, "nodes", {
        [`kubernetes.io/cluster/${cluster.namespace}`]: "owned",
      });
      otherGroup = await aws.createSecurityGroup(vpcId, "ssh");
      return [otherGroup, nodeGroup];
    },
  });
  // Someone else's rule in the shared node group: never to be touched.
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: nodeGroup,
      IpPermissions: [{ IpProtocol: "tcp", FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: "10.0.0.0/8" }] }],
    }),
  );
  const controller = await startPortico(cluster);
  const web = await cluster.createService("web", lbService(undefined, { externalTrafficPolicy: "Local" }));
  const api = await cluster.createService("api", lbService([{ name: "http", port: 8443, targetPort: 8443 }]));
  await waitForHostname(cluster, "web");
  await waitForHostname(cluster, "api");
  const groupOf = async (name: string) => {
    const inv = await inventory(aws);
    const lb = inv.loadBalancers.find(
      (l) => l.tags["portico.io/service"] === `${cluster.namespace}/${name}`,
    )!;
    return lb.securityGroups[0]!;
  };
  const webGroup = await groupOf("web");
  const apiGroup = await groupOf("api");
  const webNodePort = web.spec!.ports![0]!.nodePort!;
  const healthPort = web.spec!.healthCheckNodePort!;
  const apiNodePort = api.spec!.ports![0]!.nodePort!;

  const rules = await groupRules(aws, nodeGroup);
  expect(rules.map((r) => r.rule)).toEqual(
    [
      `tcp/${webNodePort}/${webGroup}`,
      `tcp/${healthPort}/${webGroup}`,
      `tcp/${apiNodePort}/${apiGroup}`,
      "tcp/22/10.0.0.0/8",
    ].sort(),
  );
  const webRule = rules.find((r) => r.rule === `tcp/${webNodePort}/${webGroup}`)!;
  expect(webRule.tags).toMatchObject({
    "portico.io/cluster": cluster.namespace,
    "portico.io/service": `${cluster.namespace}/web`,
    "portico.io/service-uid": web.metadata!.uid,
  });
  // The untagged second group of the nodes is left alone.
  expect(await groupRules(aws, otherGroup)).toEqual([]);

  // A no-change resync writes nothing.
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const calls = (controller.provider as AwsProvider).clients.calls;
  const before = new Map(calls);
  controller.manager.queue.add(`${cluster.namespace}/web`);
  await waitFor(
    "the resync",
    () =>
      (calls.get("ec2:DescribeSecurityGroupRules") ?? 0) >
      (before.get("ec2:DescribeSecurityGroupRules") ?? 0),
  );
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const writes = [...calls].filter(([op, n]) => MUTATING.test(op) && n !== (before.get(op) ?? 0));
  expect(writes).toEqual([]);

  // Cluster traffic policy: the health check probes the traffic port, so its own rule goes, and only it.
  await patchService(cluster, "web", { spec: { externalTrafficPolicy: "Cluster" } });
  await waitFor(
    "the health-check rule to go",
    async () => !(await groupRules(aws, nodeGroup)).some((r) => r.rule === `tcp/${healthPort}/${webGroup}`),
  );
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(
    [`tcp/${webNodePort}/${webGroup}`, `tcp/${apiNodePort}/${apiGroup}`, "tcp/22/10.0.0.0/8"].sort(),
  );

  // Deleting one Service revokes its rules alone; its own group goes too.
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("web's NLB and group to go", async () => (await inventory(aws)).securityGroups.length === 1);
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(
    [`tcp/${apiNodePort}/${apiGroup}`, "tcp/22/10.0.0.0/8"].sort(),
  );
});

test("ip targets: the group of the network interface holding the pod's IP admits the NLB on the target port", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const podGroup = await aws.createSecurityGroup(world.network.vpcId, "pods");
  await aws.createPodInterface(world.network.subnets[0]!.subnetId, "10.0.0.50", [podGroup]);
  await startPortico(cluster);
  await cluster.createEndpointSlice("web", [{ ip: "10.0.0.50" }], [{ name: "http", port: 8080 }]);
  await cluster.createService("web", lbService(), { [`${A}nlb-target-type`]: "ip" });
  await waitForHostname(cluster, "web");
  const nlbGroup = (await inventory(aws)).loadBalancers[0]!.securityGroups[0]!;
  await waitFor("the pod group's rule", async () => (await groupRules(aws, podGroup)).length === 1);
  expect((await groupRules(aws, podGroup)).map((r) => r.rule)).toEqual([`tcp/8080/${nlbGroup}`]);
});

test("manage-backend-security-group-rules: false makes no rules, and turning it off revokes Portico's", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const web = intentFor(world, "web");
  await provider.ensure(web);
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([
    `tcp/30080/${(await inventory(aws)).securityGroups[0]!.id}`,
  ]);
  const off = { [`${A}manage-backend-security-group-rules`]: "false" };
  expect(await writesDuring(provider, () => provider.ensure({ ...web, annotations: off }))).toEqual({
    "ec2:RevokeSecurityGroupIngress": 1,
  });
  expect(await groupRules(aws, nodeGroup)).toEqual([]);

  await provider.ensure(intentFor(world, "off", { annotations: off }));
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
  // Deleting the Service with its rules already gone deletes its group without a revoke.
  expect(await writesDuring(provider, () => provider.delete(web.service))).not.toHaveProperty(
    "ec2:RevokeSecurityGroupIngress",
  );
});

test("a Service with nothing left but backend rules is still found as an owner, and deleting it revokes them", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const web = intentFor(world, "web");
  await provider.ensure(web);
  // Everything else goes behind Portico's back.
  const inv = await inventory(aws);
  await aws.elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: inv.loadBalancers[0]!.arn }));
  await aws.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: inv.targetGroups[0]!.arn }));
  await aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: inv.securityGroups[0]!.id }));
  expect(await groupRules(aws, nodeGroup)).toHaveLength(1);
  expect((await provider.ownedServices()).map((s) => s.uid)).toEqual([web.service.uid]);
  await provider.delete(web.service);
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
  expect(await provider.ownedServices()).toEqual([]);
});

test("a node with several security groups and none tagged for the cluster gets no rule, and the plan says why", async ({
  cluster,
  aws,
}) => {
  const groups: string[] = [];
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => {
      groups.push(await aws.createSecurityGroup(vpcId, "a"), await aws.createSecurityGroup(vpcId, "b"));
      return groups;
    },
  });
  const provider = directProvider(cluster);
  const web = intentFor(world, "web");
  await provider.ensure(web);
  for (const g of groups) expect(await groupRules(aws, g)).toEqual([]);
  expect((await provider.plan(web)).operations).toEqual([
    `no backend rule for target ${world.instances[0]!.instanceId}: its network interface has 2 security groups and 0 of them are tagged kubernetes.io/cluster/${cluster.namespace} (exactly one must be)`,
  ]);
});

test("an equal rule someone else made is left alone: the Service is served, and its deletion keeps that rule", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  // A person already admitted the VPC on the node port Portico is about to open. (Addresses, not a group: the
  // emulator tells equal rules apart by their descriptions when they name a group, AWS never does.)
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: nodeGroup,
      IpPermissions: [
        { IpProtocol: "tcp", FromPort: 30080, ToPort: 30080, IpRanges: [{ CidrIp: "10.0.0.0/16" }] },
      ],
    }),
  );
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", {
    externalTrafficPolicy: "Local",
    healthCheckNodePort: 32000,
    annotations: { [`${A}disable-nlb-sg`]: "true" },
  });
  const result = await provider.ensure(web);
  expect(result.ingress).toHaveLength(1);
  const rules = await groupRules(aws, nodeGroup);
  expect(rules.map((r) => [r.rule, r.tags["portico.io/service-uid"]])).toEqual([
    ["tcp/30080/10.0.0.0/16", undefined],
    ["tcp/32000/10.0.0.0/24", web.service.uid],
    ["tcp/32000/10.0.1.0/24", web.service.uid],
  ]);
  await provider.delete(web.service);
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(["tcp/30080/10.0.0.0/16"]);
});

test("ip targets: as pods come and go, each pod group's rule follows them", async ({ cluster, aws }) => {
  const world = await awsWorld(cluster, aws, 1);
  const subnet = world.network.subnets[0]!.subnetId;
  const groupA = await aws.createSecurityGroup(world.network.vpcId, "pods-a");
  const groupB = await aws.createSecurityGroup(world.network.vpcId, "pods-b");
  await aws.createPodInterface(subnet, "10.0.0.71", [groupA]);
  await aws.createPodInterface(subnet, "10.0.0.72", [groupB]);
  await startPortico(cluster);
  const slice = await cluster.createEndpointSlice(
    "web",
    [{ ip: "10.0.0.71" }],
    [{ name: "http", port: 8080 }],
  );
  await cluster.createService("web", lbService(), { [`${A}nlb-target-type`]: "ip" });
  await waitForHostname(cluster, "web");
  const nlbGroup = (await inventory(aws)).loadBalancers[0]!.securityGroups[0]!;
  await waitFor("pod A's rule", async () => (await groupRules(aws, groupA)).length === 1);

  const setEndpoints = async (ips: string[]) => {
    const current = await cluster.discovery.readNamespacedEndpointSlice({
      name: slice.metadata!.name!,
      namespace: cluster.namespace,
    });
    await cluster.discovery.replaceNamespacedEndpointSlice({
      name: slice.metadata!.name!,
      namespace: cluster.namespace,
      body: { ...current, endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })) },
    });
  };
  await setEndpoints(["10.0.0.71", "10.0.0.72"]);
  await waitFor("pod B's rule", async () => (await groupRules(aws, groupB)).length === 1);
  expect((await groupRules(aws, groupB)).map((r) => r.rule)).toEqual([`tcp/8080/${nlbGroup}`]);
  await setEndpoints(["10.0.0.72"]);
  await waitFor("pod A's rule to go", async () => (await groupRules(aws, groupA)).length === 0);
  expect((await groupRules(aws, groupB)).map((r) => r.rule)).toEqual([`tcp/8080/${nlbGroup}`]);
});
