// Bring-your-own NLB security groups (`security-groups`) and none at all (`disable-nlb-sg`), against the
// emulator: Portico makes no group then and never changes or deletes the user's.
import { AuthorizeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, directProvider, intentFor, writesDuring } from "./fixtures.ts";
import { groupRules, inventory, sharedGroups } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

test("security-groups: the NLB wears the user's groups (by ID or Name); Portico's own group goes, the user's stay untouched", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const front = await aws.createSecurityGroup(world.network.vpcId, "front", { Name: "front" });
  const extra = await aws.createSecurityGroup(world.network.vpcId, "extra");
  await aws.ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: front,
      IpPermissions: [
        { IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: "192.0.2.0/24" }] },
      ],
    }),
  );
  const provider = directProvider(cluster);
  const web = intentFor(world, "web");
  await provider.ensure(web);
  const ownGroup = (await inventory(aws)).securityGroups[0]!.id;

  // By Name and by ID; the backend rules are off by default with the user's groups, as with the AWS controller.
  const byo = { ...web, annotations: { [`${A}security-groups`]: `front, ${extra}` } };
  const writes = await writesDuring(provider, () => provider.ensure(byo));
  expect(writes).toEqual({
    "elbv2:SetSecurityGroups": 1,
    "ec2:DeleteSecurityGroup": 1,
  });
  let inv = await inventory(aws);
  expect(inv.loadBalancers[0]!.securityGroups.sort()).toEqual([front, extra].sort());
  expect(inv.securityGroups).toEqual([]);
  expect(await writesDuring(provider, () => provider.ensure(byo))).toEqual({});
  // The shared rule goes once the provider knows no Service in view needs it.
  await provider.settle([web.service]);
  expect(await groupRules(aws, nodeGroup)).toEqual([]);

  // Asked for, the cluster's shared backend group rides beside the user's groups and the nodes admit it.
  const managed = {
    ...web,
    annotations: { ...byo.annotations, [`${A}manage-backend-security-group-rules`]: "true" },
  };
  await provider.ensure(managed);
  const shared = (await sharedGroups(aws))[0]!.id;
  expect((await inventory(aws)).loadBalancers[0]!.securityGroups.sort()).toEqual(
    [front, extra, shared].sort(),
  );
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual([`tcp/30080/${shared}`]);

  await provider.delete(web.service);
  await provider.settle([]);
  inv = await inventory(aws);
  expect(inv.loadBalancers).toEqual([]);
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
  expect(await sharedGroups(aws)).toEqual([]);
  expect((await groupRules(aws, front)).map((r) => r.rule)).toEqual(["tcp/80/192.0.2.0/24"]);
  expect(await groupRules(aws, extra)).toEqual([]);
  expect(ownGroup).not.toBe(front);
});

test("security-groups naming a group that does not exist is refused before anything is made", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const provider = directProvider(cluster);
  await expect(
    provider.ensure(intentFor(world, "web", { annotations: { [`${A}security-groups`]: "nope" } })),
  ).rejects.toThrow(/aws-load-balancer-security-groups.*no security group nope/);
  expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
});

test("disable-nlb-sg: a new NLB without security groups replaces the old one; backend rules then name addresses", async ({
  cluster,
  aws,
}) => {
  let nodeGroup = "";
  const world = await awsWorld(cluster, aws, 1, {
    nodeSecurityGroups: async (vpcId) => [(nodeGroup = await aws.createSecurityGroup(vpcId, "nodes"))],
  });
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", { externalTrafficPolicy: "Local", healthCheckNodePort: 32000 });
  const before = await provider.ensure(web);
  const none = { ...web, annotations: { [`${A}disable-nlb-sg`]: "true" } };
  // The first pass makes the new NLB and keeps the old until the new one is active; the next finishes.
  await provider.ensure(none);
  const after = await provider.ensure(none);
  const inv = await inventory(aws);
  expect(inv.loadBalancers).toHaveLength(1);
  expect(inv.loadBalancers[0]!.securityGroups).toEqual([]);
  expect(after.ingress[0]!.hostname).not.toBe(before.ingress[0]!.hostname);
  expect(inv.securityGroups).toEqual([]);
  // The shared range the first NLB needed goes once the provider knows no Service in view needs it.
  await provider.settle([web.service]);
  // As the AWS Load Balancer Controller writes them: instance targets see the clients' addresses, so traffic is
  // admitted from the VPC (an internal NLB, no source ranges) and health checks from the NLB's subnets.
  const subnets = ["10.0.0.0/24", "10.0.1.0/24"];
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(
    ["tcp/30080/10.0.0.0/16", ...subnets.map((c) => `tcp/32000/${c}`)].sort(),
  );
  expect(await writesDuring(provider, () => provider.ensure(none))).toEqual({});
  // Source ranges narrow the traffic rule.
  await provider.ensure({ ...none, sourceRanges: ["192.0.2.0/24"] });
  expect((await groupRules(aws, nodeGroup)).map((r) => r.rule)).toEqual(
    ["tcp/30080/192.0.2.0/24", ...subnets.map((c) => `tcp/32000/${c}`)].sort(),
  );
  await provider.delete(web.service);
  expect(await groupRules(aws, nodeGroup)).toEqual([]);
});

test("security-group-prefix-lists: the NLB's group admits the prefix lists instead of everyone", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const { CreateManagedPrefixListCommand } = await import("@aws-sdk/client-ec2");
  const list = await aws.ec2.send(
    new CreateManagedPrefixListCommand({ PrefixListName: "office", MaxEntries: 5, AddressFamily: "IPv4" }),
  );
  const id = list.PrefixList!.PrefixListId!;
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", { annotations: { [`${A}security-group-prefix-lists`]: id } });
  await provider.ensure(web);
  const group = (await inventory(aws)).securityGroups[0]!.id;
  expect((await groupRules(aws, group)).map((r) => r.rule)).toEqual([`tcp/80/${id}`]);
  expect(await writesDuring(provider, () => provider.ensure(web))).toEqual({});
});

test("inbound-sg-rules-on-private-link-traffic goes to SetSecurityGroups right after the NLB is made", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const provider = directProvider(cluster);
  const sent: Record<string, unknown>[] = [];
  provider.clients.elbv2.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === "SetSecurityGroupsCommand")
        sent.push(args.input as Record<string, unknown>);
      return next(args);
    },
    { step: "initialize", name: "recordSetSecurityGroups" },
  );
  await provider.ensure(
    intentFor(world, "web", { annotations: { [`${A}inbound-sg-rules-on-private-link-traffic`]: "off" } }),
  );
  const inv = await inventory(aws);
  const shared = (await sharedGroups(aws))[0]!.id;
  // The emulator neither keeps nor reports the setting, so only the call can be checked here.
  expect(sent).toEqual([
    {
      LoadBalancerArn: inv.loadBalancers[0]!.arn,
      SecurityGroups: [inv.securityGroups[0]!.id, shared],
      EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic: "off",
    },
  ]);
  expect(inv.loadBalancers[0]!.securityGroups.sort()).toEqual([inv.securityGroups[0]!.id, shared].sort());
});
