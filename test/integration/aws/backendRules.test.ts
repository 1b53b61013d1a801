// The targets' own security groups let the NLBs in (as the AWS Load Balancer Controller's backend rules do): one
// shared group on every NLB, admitted by one range rule per backend group and protocol; only Portico's rules are
// added and revoked, other rules of a shared group are never touched.
import { AuthorizeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
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
import { groupRules, inventory, sharedGroups } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const MUTATING = /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/;

test("instance targets: the nodes' cluster-tagged group admits the cluster's shared group on one range spanning every Service's node and health-check ports", async ({
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
  const inv = await inventory(aws);
  expect(await sharedGroups(aws)).toHaveLength(1);
  const shared = (await sharedGroups(aws))[0]!.id;
  const nlbOf = (name: string) =>
    inv.loadBalancers.find((l) => l.tags["portico.io/service"] === `${cluster.namespace}/${name}`)!;
  // Each NLB carries its own group (the listeners' rules) and the shared one (what the nodes admit).
  for (const name of ["web", "api"]) {
    const own = inv.securityGroups.find((g) => nlbOf(name).securityGroups.includes(g.id))!;
    expect(nlbOf(name).securityGroups.sort()).toEqual([own.id, shared].sort());
  }
  const webNodePort = web.spec!.ports![0]!.nodePort!;
  const healthPort = web.spec!.healthCheckNodePort!;
  const apiNodePort = api.spec!.ports![0]!.nodePort!;
  const range = (...ports: number[]) => {
    const [from, to] = [Math.min(...ports), Math.max(...ports)];
    return `tcp/${from === to ? from : `${from}-${to}`}/${shared}`;
  };
  await waitFor("one range over all three ports", async () =>
    (await groupRules(aws, nodeGroup)).some((r) => r.rule === range(webNodePort, healthPort, apiNodePort)),
  );
  const rules = await groupRules(aws, nodeGroup);
  expect(rules.map((r) => r.rule)).toEqual(
    [range(webNodePort, healthPort, apiNodePort), "tcp/22/10.0.0.0/8"].sort(),
  );
  expect(rules.find((r) => r.rule.endsWith(shared))!.tags).toEqual({
    "portico.io/cluster": cluster.namespace,
    "portico.io/resource": "backend-range",
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
    () => (calls.get("elbv2:DescribeTargetHealth") ?? 0) > (before.get("elbv2:DescribeTargetHealth") ?? 0),
  );
  await waitFor("the queue to settle", () => controller.manager.queue.length === 0);
  const writes = [...calls].filter(([op, n]) => MUTATING.test(op) && n !== (before.get(op) ?? 0));
  expect(writes).toEqual([]);

  // Cluster traffic policy: the health check probes the traffic port, so the range holds the node ports alone.
  await patchService(cluster, "web", { spec: { externalTrafficPolicy: "Cluster" } });
  const nodePortsOnly = [range(webNodePort, apiNodePort), "tcp/22/10.0.0.0/8"].sort();
  await waitFor("the range to narrow", async () =>
    sameRules(await groupRules(aws, nodeGroup), nodePortsOnly),
  );

  // Deleting one Service narrows the range to the other's port; deleting the last revokes it, and the shared
  // group goes once nothing uses it (at the next settle).
  await cluster.core.deleteNamespacedService({ name: "web", namespace: cluster.namespace });
  await waitFor("web's NLB and group to go", async () => (await inventory(aws)).securityGroups.length === 1);
  await waitFor("api's port alone", async () =>
    sameRules(await groupRules(aws, nodeGroup), [range(apiNodePort), "tcp/22/10.0.0.0/8"].sort()),
  );
  await cluster.core.deleteNamespacedService({ name: "api", namespace: cluster.namespace });
  await waitFor("api's NLB and group to go", async () => (await inventory(aws)).securityGroups.length === 0);
  await waitFor("the range to go", async () =>
    sameRules(await groupRules(aws, nodeGroup), ["tcp/22/10.0.0.0/8"]),
  );
  await (controller.provider as AwsProvider).settle([]);
  expect(await sharedGroups(aws)).toEqual([]);
});

const sameRules = (rules: { rule: string }[], want: string[]) =>
  JSON.stringify(rules.map((r) => r.rule)) === JSON.stringify(want);

test("65 Services on one node group (EC2 allows 60 rules per group) are all served: their ports share one rule", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const services = Array.from({ length: 65 }, (_, i) =>
    intentFor(world, `web-${i}`, {
      ports: [{ name: "", protocol: "TCP", port: 80, nodePort: 30100 + i }],
    }),
  );
  for (const s of services) expect((await provider.ensure(s)).ingress).toHaveLength(1);
  const shared = (await sharedGroups(aws))[0]!.id;
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30100-30164/${shared}`]);
  // Told which Services exist, the rule narrows to what they need, and goes with the last of them.
  for (const s of services.slice(0, 60)) await provider.delete(s.service);
  await provider.settle(services.slice(60).map((s) => s.service));
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30160-30164/${shared}`]);
  for (const s of services.slice(60)) await provider.delete(s.service);
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
}, 240_000); // sixty-five load balancers against the emulator: seconds alone, more on a busy machine

test("ip targets: the group of the network interface holding the pod's IP admits the shared group on the target port", async ({
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
  await waitFor("the pod group's rule", async () => (await groupRules(aws, podGroup)).length === 1);
  const shared = (await sharedGroups(aws))[0]!.id;
  expect((await groupRules(aws, podGroup)).map((r) => r.rule)).toEqual([`tcp/8080/${shared}`]);
});

test("manage-backend-security-group-rules: false takes the shared group off the NLB, and its ports are no longer held open", async ({
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
  const shared = (await sharedGroups(aws))[0]!.id;
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30080/${shared}`]);
  const off = { [`${A}manage-backend-security-group-rules`]: "false" };
  // Until the provider knows every Service there may be one relying on the rule: it stays.
  expect(await writesDuring(provider, () => provider.ensure({ ...web, annotations: off }))).toEqual({
    "elbv2:SetSecurityGroups": 1,
  });
  expect((await inventory(aws)).loadBalancers[0]!.securityGroups).not.toContain(shared);
  expect(await writesDuring(provider, () => provider.settle([web.service]))).toEqual({
    "ec2:RevokeSecurityGroupIngress": 1,
    "ec2:DeleteSecurityGroup": 1,
  });
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
  expect(await sharedGroups(aws)).toEqual([]);

  await provider.ensure(intentFor(world, "off", { annotations: off }));
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
  expect(await writesDuring(provider, () => provider.delete(web.service))).not.toHaveProperty(
    "ec2:RevokeSecurityGroupIngress",
  );
});

test("an NLB from before the shared rules (its own rules, one per port) moves over: the range first, then its rules go", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", {
    annotations: { [`${A}manage-backend-security-group-rules`]: "false" },
  });
  await provider.ensure(web);
  const own = (await inventory(aws)).securityGroups[0]!.id;
  // The rule an earlier Portico made: the NLB's own group on the node port, tagged as the Service's.
  const tag = (Key: string, Value: string) => ({ Key, Value });
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: nodeGroup,
      IpPermissions: [
        { IpProtocol: "tcp", FromPort: 30080, ToPort: 30080, UserIdGroupPairs: [{ GroupId: own }] },
      ],
      TagSpecifications: [
        {
          ResourceType: "security-group-rule",
          Tags: [
            tag("portico.io/cluster", cluster.namespace),
            tag("portico.io/service", "shop/web"),
            tag("portico.io/service-uid", web.service.uid),
            tag("portico.io/resource", "backend-rule"),
          ],
        },
      ],
    }),
  );
  // Still owned through that rule alone, as before.
  expect((await provider.ownedServices()).map((s) => s.uid)).toEqual([web.service.uid]);
  const calls: string[] = [];
  provider.clients.onCall((_service, operation) => {
    if (/Authorize|Revoke/.test(operation)) calls.push(operation);
  });
  await provider.ensure({ ...web, annotations: {} });
  const shared = (await sharedGroups(aws))[0]!.id;
  expect(calls).toEqual(["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress"]);
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30080/${shared}`]);
  expect((await inventory(aws)).loadBalancers[0]!.securityGroups.sort()).toEqual([own, shared].sort());
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
  await waitFor("pod A's rule", async () => (await groupRules(aws, groupA)).length === 1);
  const shared = (await sharedGroups(aws))[0]!.id;

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
  expect((await groupRules(aws, groupB)).map((r) => r.rule)).toEqual([`tcp/8080/${shared}`]);
  await setEndpoints(["10.0.0.72"]);
  await waitFor("pod A's rule to go", async () => (await groupRules(aws, groupA)).length === 0);
  expect((await groupRules(aws, groupB)).map((r) => r.rule)).toEqual([`tcp/8080/${shared}`]);
});

test("a Service in view that owns nothing in the cloud (refused before anything was made) does not hold the shared ranges back", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const a = intentFor(world, "a");
  const c = intentFor(world, "c", { ports: [{ name: "", protocol: "TCP", port: 80, nodePort: 30099 }] });
  await provider.ensure(a);
  await provider.ensure(c);
  await provider.delete(c.service);
  const shared = (await sharedGroups(aws))[0]!.id;
  // Not yet told which Services exist: c's port stays open, as a Service not looked at might rely on it.
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30080-30099/${shared}`]);
  // b is in view but was never made (its annotations were refused, say): it relies on nothing.
  const b = intentFor(world, "b").service;
  await provider.settle([a.service, b]);
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30080/${shared}`]);
});
