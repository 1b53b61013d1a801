// The emulator's tag lookups, as test/env/moto_server.py serves them from indexes: what they answer must be what
// moto's own scans answer (the same resources, in the same order) for resources created, retagged and deleted.
// And the server under test must be that wrapper with its patches, or this file would pass on a plain moto.
import {
  CreateTagsCommand,
  DeleteSecurityGroupCommand,
  DeleteTagsCommand,
  DescribeSecurityGroupsCommand,
  DescribeTagsCommand as DescribeEc2TagsCommand,
  type Filter,
} from "@aws-sdk/client-ec2";
import {
  AddTagsCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  DescribeTagsCommand,
  RemoveTagsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
  type TagFilter,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { describe, expect, test, type TestAws } from "../../harness/index.ts";

const ELB_TYPES = ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup"];
const CLUSTER = "portico.io/cluster";
const UID = "portico.io/service-uid";

const tagList = (tags: Record<string, string>) =>
  Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));

async function groups(aws: TestAws, Filters: Filter[]): Promise<string[]> {
  const out = await aws.ec2.send(new DescribeSecurityGroupsCommand({ Filters }));
  return (out.SecurityGroups ?? []).map((g) => g.GroupId!);
}

/** Every page of GetResources, as ARNs in the order given; `perPage` small to take the pagination path too. */
async function resources(
  TagFilters: TagFilter[],
  ResourceTypeFilters?: string[],
  perPage = 100,
): Promise<string[]> {
  const tagging = new ResourceGroupsTaggingAPIClient({});
  const arns: string[] = [];
  let token: string | undefined;
  do {
    const page = await tagging.send(
      new GetResourcesCommand({
        TagFilters,
        ResourcesPerPage: perPage,
        ...(ResourceTypeFilters ? { ResourceTypeFilters } : {}),
        ...(token ? { PaginationToken: token } : {}),
      }),
    );
    arns.push(...(page.ResourceTagMappingList ?? []).map((r) => r.ResourceARN!));
    token = page.PaginationToken || undefined;
  } while (token);
  return arns;
}

describe.skipIf(process.env.PORTICO_AWS_EMULATOR !== "moto")("moto's indexed tag lookups", () => {
  test("the emulator is moto_server.py with its patches", async () => {
    const res = await fetch(`${process.env.AWS_ENDPOINT_URL}/portico-moto/patches`);
    expect(
      res.ok,
      `${process.env.AWS_ENDPOINT_URL} is not test/env/moto_server.py (an external AWS_ENDPOINT_URL?)`,
    ).toBe(true);
    // None applied: PORTICO_MOTO_PLAIN=1, or a moto other than the one the patches were written for (check them
    // against its source again and update PATCHED_VERSION).
    const { counters, ...server } = (await res.json()) as { counters: Record<string, unknown> };
    expect(server).toEqual({
      moto: "5.2.5",
      patches: [
        "ec2-tags-by-resource-id",
        "security-group-tag-filters",
        "security-groups-indexed",
        "tagging-skips-ec2-for-other-types",
        "elbv2-tags-indexed",
      ],
    });
    expect(Object.keys(counters)).toEqual(["elbv2-index-answers", "security-group-index-answers"]);
  });

  test("DescribeSecurityGroups by tag finds the groups tagged so, as created, retagged and deleted", async ({
    aws,
  }) => {
    const { vpcId } = await aws.createNetwork("c1");
    const a = await aws.createSecurityGroup(vpcId, "a", { [CLUSTER]: "c1", [UID]: "u1", Name: "web" });
    const b = await aws.createSecurityGroup(vpcId, "b", { [CLUSTER]: "c1", [UID]: "u2" });
    const c = await aws.createSecurityGroup(vpcId, "c", { [CLUSTER]: "c2", [UID]: "u3" });
    const untagged = await aws.createSecurityGroup(vpcId, "d");
    const cluster = (...Values: string[]): Filter => ({ Name: `tag:${CLUSTER}`, Values });

    expect(await groups(aws, [cluster("c1")])).toEqual([a, b]);
    expect(await groups(aws, [cluster("c1", "c2")])).toEqual([a, b, c]);
    expect(await groups(aws, [cluster("c1"), { Name: `tag:${UID}`, Values: ["u2"] }])).toEqual([b]);
    expect(await groups(aws, [{ Name: "tag-key", Values: [UID] }])).toEqual([a, b, c]);
    expect(await groups(aws, [{ Name: "tag-key", Values: ["absent", "Name"] }])).toEqual([a]);
    expect(await groups(aws, [cluster("c3")])).toEqual([]);
    // Patterns and other filters are moto's own to answer, before and after a tag filter.
    expect(await groups(aws, [cluster("c*")])).toEqual([a, b, c]);
    expect(await groups(aws, [{ Name: "vpc-id", Values: [vpcId] }, cluster("c2")])).toEqual([c]);
    expect(await groups(aws, [cluster("c1"), { Name: "group-name", Values: ["b"] }])).toEqual([b]);
    expect(await groups(aws, [{ Name: "group-id", Values: [untagged] }])).toEqual([untagged]);
    // A group's tags as the response shows them.
    const shown = await aws.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [a] }));
    expect(shown.SecurityGroups![0]!.Tags).toEqual(tagList({ [CLUSTER]: "c1", [UID]: "u1", Name: "web" }));

    // Retagged: a moves to c2, b loses its uid; a value that is not the tag's deletes nothing.
    await aws.ec2.send(new CreateTagsCommand({ Resources: [a], Tags: tagList({ [CLUSTER]: "c2" }) }));
    await aws.ec2.send(new DeleteTagsCommand({ Resources: [b], Tags: [{ Key: UID }] }));
    await aws.ec2.send(new DeleteTagsCommand({ Resources: [c], Tags: [{ Key: CLUSTER, Value: "other" }] }));
    expect(await groups(aws, [cluster("c1")])).toEqual([b]);
    expect(await groups(aws, [cluster("c2")])).toEqual([a, c]);
    expect(await groups(aws, [{ Name: "tag-key", Values: [UID] }])).toEqual([a, c]);
    // A tag on an untagged group.
    await aws.ec2.send(new CreateTagsCommand({ Resources: [untagged], Tags: tagList({ [CLUSTER]: "c1" }) }));
    expect(await groups(aws, [cluster("c1")])).toEqual([b, untagged]);

    // Deleted: gone from every answer, and a group made after it with its tags is found instead.
    await aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: c }));
    const e = await aws.createSecurityGroup(vpcId, "e", { [CLUSTER]: "c2", [UID]: "u3" });
    expect(await groups(aws, [cluster("c2")])).toEqual([a, e]);
    expect(await groups(aws, [{ Name: `tag:${UID}`, Values: ["u3"] }])).toEqual([e]);

    // DescribeTags by resource id: one resource's tags, and two resources' in the order the store holds them.
    const tagsOf = async (...ids: string[]) =>
      (
        await aws.ec2.send(new DescribeEc2TagsCommand({ Filters: [{ Name: "resource-id", Values: ids }] }))
      ).Tags!.map((t) => [t.ResourceId, t.ResourceType, t.Key, t.Value]);
    expect(await tagsOf(e)).toEqual([
      [e, "security-group", CLUSTER, "c2"],
      [e, "security-group", UID, "u3"],
    ]);
    expect(await tagsOf(e, b)).toEqual([
      [b, "security-group", CLUSTER, "c1"],
      [e, "security-group", CLUSTER, "c2"],
      [e, "security-group", UID, "u3"],
    ]);
  });

  test("GetResources by tag and ELBv2 DescribeTags find load balancers and target groups as created, retagged and deleted", async ({
    aws,
  }) => {
    const network = await aws.createNetwork("c1", { internal: true });
    const subnets = network.subnets.map((s) => s.subnetId);
    const group = await aws.createSecurityGroup(network.vpcId, "g", { [CLUSTER]: "c1", [UID]: "u1" });
    const targetGroup = async (name: string, tags: Record<string, string>) =>
      (
        await aws.elbv2.send(
          new CreateTargetGroupCommand({
            Name: name,
            Protocol: "TCP",
            Port: 80,
            VpcId: network.vpcId,
            Tags: tagList(tags),
          }),
        )
      ).TargetGroups![0]!.TargetGroupArn!;
    const loadBalancer = async (name: string, tags: Record<string, string>) =>
      (
        await aws.elbv2.send(
          new CreateLoadBalancerCommand({
            Name: name,
            Type: "network",
            Scheme: "internal",
            Subnets: subnets,
            Tags: tagList(tags),
          }),
        )
      ).LoadBalancers![0]!.LoadBalancerArn!;
    const tg1 = await targetGroup("tg1", { [CLUSTER]: "c1", [UID]: "u1" });
    const tg2 = await targetGroup("tg2", { [CLUSTER]: "c1", [UID]: "u2" });
    const lb1 = await loadBalancer("lb1", { [CLUSTER]: "c1", [UID]: "u1" });
    const lb2 = await loadBalancer("lb2", { [CLUSTER]: "c2", [UID]: "u3" });

    // moto's order: load balancers, then target groups, each as created.
    expect(await resources([{ Key: CLUSTER }], ELB_TYPES)).toEqual([lb1, lb2, tg1, tg2]);
    expect(await resources([{ Key: CLUSTER }], ELB_TYPES, 1)).toEqual([lb1, lb2, tg1, tg2]);
    expect(await resources([{ Key: CLUSTER, Values: ["c1"] }], ELB_TYPES)).toEqual([lb1, tg1, tg2]);
    expect(await resources([{ Key: UID, Values: ["u1", "u3"] }], ELB_TYPES)).toEqual([lb1, lb2, tg1]);
    expect(
      await resources(
        [
          { Key: CLUSTER, Values: ["c1"] },
          { Key: UID, Values: ["u2"] },
        ],
        ELB_TYPES,
      ),
    ).toEqual([tg2]);
    expect(await resources([{ Key: CLUSTER, Values: ["c1"] }], ["elasticloadbalancing:targetgroup"])).toEqual(
      [tg1, tg2],
    );
    // EC2's resources are there when the types asked for include them (or none are asked for).
    const everyType = await resources([{ Key: UID, Values: ["u1"] }]);
    const groupArn = everyType.find((arn) => arn.endsWith(`:security-group/${group}`));
    expect(groupArn).toBeDefined();
    expect(everyType).toEqual(expect.arrayContaining([groupArn, lb1, tg1]));
    expect(await resources([{ Key: UID, Values: ["u1"] }], ["ec2"])).toEqual([groupArn]);
    expect(await resources([{ Key: UID, Values: ["u1"] }], ["ec2:security-group", ...ELB_TYPES])).toEqual(
      expect.arrayContaining([groupArn, lb1, tg1]),
    );

    // Retagged: tg2 gets another uid, lb1 loses its cluster tag.
    await aws.elbv2.send(new AddTagsCommand({ ResourceArns: [tg2], Tags: tagList({ [UID]: "u9" }) }));
    await aws.elbv2.send(new RemoveTagsCommand({ ResourceArns: [lb1], TagKeys: [CLUSTER] }));
    expect(await resources([{ Key: UID, Values: ["u2"] }], ELB_TYPES)).toEqual([]);
    expect(await resources([{ Key: UID, Values: ["u9"] }], ELB_TYPES)).toEqual([tg2]);
    expect(await resources([{ Key: CLUSTER }], ELB_TYPES)).toEqual([lb2, tg1, tg2]);
    const described = await aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: [lb1, tg2] }));
    expect(described.TagDescriptions!.map((d) => [d.ResourceArn, d.Tags])).toEqual([
      [lb1, tagList({ [UID]: "u1" })],
      [tg2, tagList({ [CLUSTER]: "c1", [UID]: "u9" })],
    ]);

    // Deleted: not returned any more.
    await aws.elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: lb2 }));
    await aws.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: tg1 }));
    expect(await resources([{ Key: CLUSTER }], ELB_TYPES)).toEqual([tg2]);
    expect(await resources([{ Key: UID }], ELB_TYPES)).toEqual([lb1, tg2]);
  });
});
