// Static NLB addresses through SubnetMappings. The emulator accepts SubnetMappings but does not keep their
// addresses, so the CreateLoadBalancer calls are read as they leave the SDK, next to the state AWS holds.
import type { CreateLoadBalancerCommandInput } from "@aws-sdk/client-elastic-load-balancing-v2";
import { expect, test } from "../../harness/index.ts";
import type { AwsProvider } from "../../../providers/aws/provider.ts";
import { awsWorld, directProvider, intentFor } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const A = "service.beta.kubernetes.io/aws-load-balancer-";

function recordCreations(provider: AwsProvider): CreateLoadBalancerCommandInput[] {
  const seen: CreateLoadBalancerCommandInput[] = [];
  provider.clients.elbv2.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === "CreateLoadBalancerCommand")
        seen.push(args.input as CreateLoadBalancerCommandInput);
      return next(args);
    },
    { step: "initialize", name: "recordCreations" },
  );
  return seen;
}

test("private-ipv4-addresses: one address per subnet, in its CIDR; a change makes a new NLB before the old one goes", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1);
  const [a, b] = [...world.network.subnets].sort((x, y) => x.subnetId.localeCompare(y.subnetId));
  const provider = directProvider(cluster);
  const created = recordCreations(provider);
  // Subnets are 10.0.0.0/24 and 10.0.1.0/24 in the order made; addresses may come in any order.
  const cidrOf = (s: { subnetId: string }) =>
    world.network.subnets.indexOf(world.network.subnets.find((x) => x.subnetId === s.subnetId)!);
  const address = (s: { subnetId: string }, host: number) => `10.0.${cidrOf(s)}.${host}`;
  const web = (host: number) =>
    intentFor(world, "web", {
      service: { namespace: "shop", name: "web", uid: "uid-static" },
      annotations: { [`${A}private-ipv4-addresses`]: `${address(b!, host)},${address(a!, host)}` },
    });
  const first = await provider.ensure(web(10));
  expect(created).toHaveLength(1);
  expect(created[0]!.Subnets).toBeUndefined();
  expect(created[0]!.SubnetMappings).toEqual([
    { SubnetId: a!.subnetId, PrivateIPv4Address: address(a!, 10) },
    { SubnetId: b!.subnetId, PrivateIPv4Address: address(b!, 10) },
  ]);
  expect((await inventory(aws)).loadBalancers).toHaveLength(1);

  await provider.ensure(web(20));
  const second = await provider.ensure(web(20));
  expect(created).toHaveLength(2);
  expect(created[1]!.SubnetMappings!.map((m) => m.PrivateIPv4Address)).toEqual([
    address(a!, 20),
    address(b!, 20),
  ]);
  const inv = await inventory(aws);
  expect(inv.loadBalancers).toHaveLength(1);
  expect(second.ingress[0]!.hostname).not.toBe(first.ingress[0]!.hostname);
  expect(second.ingress[0]!.hostname).toBe(inv.loadBalancers[0]!.dnsName);
});

test.for([
  ["a count that is not the subnets'", { "private-ipv4-addresses": "10.0.0.5" }, /1 given for 2 subnets/],
  [
    "an address outside the subnets",
    { "private-ipv4-addresses": "10.0.0.5,10.9.0.5" },
    /10.9.0.5 is in none/,
  ],
  ["Elastic IPs on an internal NLB", { "eip-allocations": "eipalloc-1,eipalloc-2" }, /internet-facing/],
  ["IPv6 addresses without dualstack", { "ipv6-addresses": "2600::1,2600::2" }, /dualstack/],
] as const)(
  "%s is refused, naming the annotation, before anything is made",
  async ([, annotations, message], { cluster, aws }) => {
    const world = await awsWorld(cluster, aws, 1);
    const provider = directProvider(cluster);
    const prefixed = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${A}${k}`, v]));
    await expect(provider.ensure(intentFor(world, "web", { annotations: prefixed }))).rejects.toThrow(
      message,
    );
    await expect(provider.ensure(intentFor(world, "web", { annotations: prefixed }))).rejects.toThrow(
      /metadata\.annotations\[service\.beta\.kubernetes\.io\/aws-load-balancer-/,
    );
    expect(await inventory(aws)).toEqual({ loadBalancers: [], targetGroups: [], securityGroups: [] });
  },
);

test("eip-allocations on an internet-facing NLB: one allocation per subnet, in the subnets' order", async ({
  cluster,
  aws,
}) => {
  const world = await awsWorld(cluster, aws, 1, { internetFacing: true });
  const { AllocateAddressCommand } = await import("@aws-sdk/client-ec2");
  const eips = [
    (await aws.ec2.send(new AllocateAddressCommand({ Domain: "vpc" }))).AllocationId!,
    (await aws.ec2.send(new AllocateAddressCommand({ Domain: "vpc" }))).AllocationId!,
  ];
  const provider = directProvider(cluster);
  const created = recordCreations(provider);
  await provider.ensure(
    intentFor(world, "web", {
      annotations: { [`${A}scheme`]: "internet-facing", [`${A}eip-allocations`]: eips.join(",") },
    }),
  );
  const publicSubnets = world.network.subnets
    .slice(2)
    .map((s) => s.subnetId)
    .sort();
  expect(created[0]!.Scheme).toBe("internet-facing");
  expect(created[0]!.SubnetMappings).toEqual(
    publicSubnets.map((SubnetId, i) => ({ SubnetId, AllocationId: eips[i] })),
  );
});
