// IPv6 ip targets behind a dualstack NLB, as the AWS Load Balancer Controller makes them for a Service with an
// IPv6 family.
import { DescribeTargetGroupsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, test } from "../../harness/index.ts";
import { awsWorld, directProvider, intentFor, withIpv6, writesDuring } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

test("a dual-stack Service with ip targets gets an ipv6 target group of its IPv6 endpoints on a dualstack NLB", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  // A dualstack NLB's subnets need IPv6 blocks.
  await withIpv6(
    aws,
    world.network.vpcId,
    world.network.subnets.map((s) => s.subnetId),
  );
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", {
    ipFamilies: ["IPv4", "IPv6"],
    ipFamilyPolicy: "RequireDualStack",
    endpoints: [
      { ip: "10.0.0.7", ports: { http: 8080 } },
      { ip: "2600:1f18::7", ports: { http: 8080 } },
    ],
    annotations: {
      [`${A}nlb-target-type`]: "ip",
      [`${A}ip-address-type`]: "dualstack",
      // The emulator does not implement DescribeNetworkInterfaces' ipv6-addresses.ipv6-address filter.
      [`${A}manage-backend-security-group-rules`]: "false",
    },
  });
  await provider.ensure(web);
  const inv = await inventory(aws);
  expect(inv.targetGroups).toHaveLength(1);
  expect(inv.targetGroups[0]!.targets).toEqual(["2600:1f18::7:8080"]);
  const described = await aws.elbv2.send(
    new DescribeTargetGroupsCommand({ TargetGroupArns: [inv.targetGroups[0]!.arn] }),
  );
  expect(described.TargetGroups![0]!.IpAddressType).toBe("ipv6");
  expect(inv.securityGroups[0]!.ingress).toEqual(["tcp/80/0.0.0.0/0"]);
  expect(await writesDuring(provider, () => provider.ensure(web))).toEqual({});
});

test("an IPv6 Service with instance targets gets an ipv6 target group of its nodes, and is refused on an ipv4 NLB", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 2);
  await withIpv6(
    aws,
    world.network.vpcId,
    world.network.subnets.map((s) => s.subnetId),
  );
  const provider = directProvider(cluster);
  const web = intentFor(world, "web", {
    ipFamilies: ["IPv6"],
    annotations: { [`${A}ip-address-type`]: "dualstack" },
  });
  await provider.ensure(web);
  const inv = await inventory(aws);
  expect(inv.targetGroups[0]!.targets).toEqual(world.instances.map((i) => `${i.instanceId}:30080`).sort());
  const described = await aws.elbv2.send(
    new DescribeTargetGroupsCommand({ TargetGroupArns: [inv.targetGroups[0]!.arn] }),
  );
  expect(described.TargetGroups![0]!).toMatchObject({ IpAddressType: "ipv6", TargetType: "instance" });
  await expect(provider.ensure(intentFor(world, "v4nlb", { ipFamilies: ["IPv6"] }))).rejects.toThrow(
    /IPv6 node ports.*ip-address-type/,
  );
});
