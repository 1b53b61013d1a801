// The emulator's indexes (test/env/moto_server.py) against moto itself: the same load balancers, target groups and
// security groups created, retagged, deleted and made again on the patched server and on a plain one, and after every
// few steps the same GetResources and DescribeSecurityGroups questions to both. The answers must be the same resources,
// with the same tags, in the same order, and the patched server must say its indexes gave some of them (or this would
// compare two scans).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AddTagsCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  RemoveTagsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
  type TagFilter,
} from "@aws-sdk/client-resource-groups-tagging-api";
import {
  CreateTagsCommand,
  DeleteSecurityGroupCommand,
  DeleteTagsCommand,
  DescribeSecurityGroupsCommand,
  type Filter,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll } from "vitest";
import { describe, expect, test } from "../../harness/index.ts";
import { TestAws } from "../../harness/aws.ts";
import { startMoto } from "../../harness/awsEmulator.ts";
import { ensureTools } from "../../harness/tools.ts";
import { seededRandom } from "../../harness/random.ts";

const ELB_TYPES = ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup"];
const CLUSTER = "portico.io/cluster";
const UID = "portico.io/service-uid";
const EXTRA = "portico.io/extra";
const UIDS = 16;

/** One server and what has been made on it, by name (ARNs differ between the servers: moto draws their ids). */
interface Side {
  url: string;
  aws: TestAws;
  tagging: ResourceGroupsTaggingAPIClient;
  subnets: string[];
  vpcId: string;
  /** A second VPC, for security groups of the same name in two VPCs. */
  otherVpcId: string;
  arns: Map<string, string>;
  names: Map<string, string>;
  /** Security groups: "<vpc>/<name>" to id and back (the default VPC's are "default/..."). */
  groupIds: Map<string, string>;
  groupLabels: Map<string, string>;
}

const tagList = (tags: Record<string, string>) =>
  Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));

async function counter(url: string, name: string): Promise<number> {
  const answer = (await (await fetch(`${url}/portico-moto/patches`)).json()) as {
    counters?: Record<string, number>;
  };
  return answer.counters?.[name] ?? 0;
}

/** Every page of an answer, as (name, tags) in the order given. */
async function ask(side: Side, TagFilters: TagFilter[], types: string[] | undefined, perPage: number) {
  const found: [string, Record<string, string>][] = [];
  let token: string | undefined;
  do {
    const page = await side.tagging.send(
      new GetResourcesCommand({
        TagFilters,
        ResourcesPerPage: perPage,
        ...(types ? { ResourceTypeFilters: types } : {}),
        ...(token ? { PaginationToken: token } : {}),
      }),
    );
    for (const r of page.ResourceTagMappingList ?? []) {
      // EC2's resources (asked for when no type is given) are named by what their ARN ends with.
      const name = side.names.get(r.ResourceARN!) ?? r.ResourceARN!.replace(/^.*:/, "");
      found.push([name, Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value!]))]);
    }
    token = page.PaginationToken || undefined;
  } while (token);
  return found;
}

/** Every group an answer names, as "<vpc>/<name>" with its tags, in the order given. */
async function groupsOf(side: Side, filters: Filter[]): Promise<[string, Record<string, string>][]> {
  const out = await side.aws.ec2.send(new DescribeSecurityGroupsCommand({ Filters: filters }));
  return (out.SecurityGroups ?? []).map((g) => [
    side.groupLabels.get(g.GroupId!) ??
      `${g.VpcId === side.vpcId ? "a" : g.VpcId === side.otherVpcId ? "b" : "default"}/${g.GroupName}`,
    Object.fromEntries((g.Tags ?? []).map((t) => [t.Key!, t.Value!])),
  ]);
}

describe.skipIf(process.env.PORTICO_AWS_EMULATOR !== "moto")("moto's indexes against moto's scans", () => {
  const started: { stop(): Promise<void> }[] = [];
  let dir: string;
  let patched: Side;
  let plain: Side;

  beforeAll(async () => {
    const tools = await ensureTools("all");
    dir = await mkdtemp(join(tmpdir(), "portico-moto-agree-"));
    const side = async (index: number, isPlain: boolean): Promise<Side> => {
      const moto = await startMoto(tools.motoServer!, dir, index, { plain: isPlain });
      started.push(moto.process);
      const aws = new TestAws(moto.endpoint.url);
      const network = await aws.createNetwork("c1", { internal: true });
      const other = await aws.createNetwork("c2", { internal: true });
      return {
        url: moto.endpoint.url,
        aws,
        tagging: new ResourceGroupsTaggingAPIClient({ endpoint: moto.endpoint.url }),
        subnets: network.subnets.map((s) => s.subnetId),
        vpcId: network.vpcId,
        otherVpcId: other.vpcId,
        arns: new Map(),
        names: new Map(),
        groupIds: new Map(),
        groupLabels: new Map(),
      };
    };
    [patched, plain] = await Promise.all([side(1, false), side(2, true)]);
  });

  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("GetResources answers as moto's own walk does, step by step", { timeout: 180_000 }, async () => {
    const next = seededRandom(32);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const uid = () => `u${Math.floor(next() * UIDS)}`;
    const live: string[] = [];
    const gone: string[] = [];
    let made = 0;

    const create = async (name: string, tags: Record<string, string>) => {
      for (const side of [patched, plain]) {
        const arn = name.startsWith("lb-")
          ? (
              await side.aws.elbv2.send(
                new CreateLoadBalancerCommand({
                  Name: name,
                  Type: "network",
                  Scheme: "internal",
                  Subnets: side.subnets,
                  Tags: tagList(tags),
                }),
              )
            ).LoadBalancers![0]!.LoadBalancerArn!
          : (
              await side.aws.elbv2.send(
                new CreateTargetGroupCommand({
                  Name: name,
                  Protocol: "TCP",
                  Port: 80,
                  VpcId: side.vpcId,
                  Tags: tagList(tags),
                }),
              )
            ).TargetGroups![0]!.TargetGroupArn!;
        side.arns.set(name, arn);
        side.names.set(arn, name);
      }
      live.push(name);
    };
    const onBoth = (f: (side: Side, arn: string) => Promise<unknown>, name: string) =>
      Promise.all([patched, plain].map((side) => f(side, side.arns.get(name)!)));

    const indexAnswersBefore = await counter(patched.url, "elbv2-index-answers");
    let compared = 0;
    for (let step = 1; step <= 150; step++) {
      const roll = next();
      if (roll < 0.55 || live.length < 4) {
        const name = `${next() < 0.5 ? "lb" : "tg"}-${++made}`;
        await create(name, { [CLUSTER]: pick(["c1", "c2"]), [UID]: uid() });
      } else if (roll < 0.7) {
        const tags = pick<Record<string, string>>([
          { [UID]: uid() },
          { [CLUSTER]: pick(["c1", "c2"]) },
          { [EXTRA]: "x" },
        ]);
        await onBoth(
          (side, arn) =>
            side.aws.elbv2.send(new AddTagsCommand({ ResourceArns: [arn], Tags: tagList(tags) })),
          pick(live),
        );
      } else if (roll < 0.8) {
        const key = pick([UID, CLUSTER, EXTRA]);
        await onBoth(
          (side, arn) => side.aws.elbv2.send(new RemoveTagsCommand({ ResourceArns: [arn], TagKeys: [key] })),
          pick(live),
        );
      } else if (roll < 0.92) {
        const name = live.splice(Math.floor(next() * live.length), 1)[0]!;
        await onBoth(
          (side, arn) =>
            name.startsWith("lb-")
              ? side.aws.elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn }))
              : side.aws.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })),
          name,
        );
        gone.push(name);
      } else if (gone.length) {
        // Made again under a name that was deleted: a new ARN, at the end of moto's order.
        const name = gone.splice(Math.floor(next() * gone.length), 1)[0]!;
        await create(name, { [CLUSTER]: "c1", [UID]: uid() });
      }
      if (step % 10 !== 0) continue;

      const one = uid();
      const questions: [string, TagFilter[], string[] | undefined, number][] = [
        ["one uid", [{ Key: UID, Values: [one] }], ELB_TYPES, 100],
        ["two uids, a page of one", [{ Key: UID, Values: [one, uid()] }], ELB_TYPES, 1],
        [
          "cluster and uid",
          [
            { Key: CLUSTER, Values: ["c1"] },
            { Key: UID, Values: [one] },
          ],
          ELB_TYPES,
          100,
        ],
        ["one uid, every type", [{ Key: UID, Values: [one] }], undefined, 100],
        ["one uid, target groups", [{ Key: UID, Values: [one] }], ["elasticloadbalancing:targetgroup"], 100],
        ["cluster (most of them)", [{ Key: CLUSTER, Values: ["c1"] }], ELB_TYPES, 7],
        ["a key few have", [{ Key: EXTRA }], ELB_TYPES, 100],
        ["a value nobody has", [{ Key: UID, Values: ["absent"] }], ELB_TYPES, 100],
      ];
      for (const [what, filters, types, perPage] of questions) {
        const [fromPatched, fromPlain] = await Promise.all([
          ask(patched, filters, types, perPage),
          ask(plain, filters, types, perPage),
        ]);
        expect(fromPatched, `step ${step}, ${what}: ${JSON.stringify(filters)}`).toEqual(fromPlain);
        compared += fromPlain.length;
      }
    }
    // The questions found something, and the index (not only the walk) gave answers.
    expect(compared).toBeGreaterThan(100);
    expect(await counter(patched.url, "elbv2-index-answers")).toBeGreaterThan(indexAnswersBefore + 50);
    expect(await counter(plain.url, "elbv2-index-answers")).toBe(0);
  });

  test(
    "DescribeSecurityGroups answers as moto's own scan does, step by step",
    { timeout: 180_000 },
    async () => {
      const next = seededRandom(45);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
      const uid = () => `u${Math.floor(next() * UIDS)}`;
      const live: string[] = [];
      let made = 0;

      const create = async (label: string, tags: Record<string, string>) => {
        const [vpc, name] = label.split("/") as [string, string];
        for (const side of [patched, plain]) {
          const id = await side.aws.createSecurityGroup(
            vpc === "a" ? side.vpcId : side.otherVpcId,
            name,
            tags,
          );
          side.groupIds.set(label, id);
          side.groupLabels.set(id, label);
        }
        live.push(label);
      };
      const onBoth = (f: (side: Side, id: string) => Promise<unknown>, label: string) =>
        Promise.all([patched, plain].map((side) => f(side, side.groupIds.get(label)!)));

      const indexAnswersBefore = await counter(patched.url, "security-group-index-answers");
      let compared = 0;
      for (let step = 1; step <= 150; step++) {
        const roll = next();
        if (roll < 0.5 || live.length < 4) {
          // Now and then the name of a group in the other VPC: names are unique per VPC only.
          const twin = next() < 0.2 && live.length ? pick(live).split("/")[1]! : `sg-${++made}`;
          const vpc = next() < 0.5 ? "a" : "b";
          if (!live.includes(`${vpc}/${twin}`))
            await create(`${vpc}/${twin}`, { [CLUSTER]: pick(["c1", "c2"]), [UID]: uid() });
        } else if (roll < 0.68) {
          const tags = pick<Record<string, string>>([
            { [UID]: uid() },
            { [CLUSTER]: pick(["c1", "c2"]) },
            { [EXTRA]: "x" },
          ]);
          await onBoth(
            (side, id) => side.aws.ec2.send(new CreateTagsCommand({ Resources: [id], Tags: tagList(tags) })),
            pick(live),
          );
        } else if (roll < 0.8) {
          // By key alone, or by key and a value (which deletes the tag only if it has that value).
          const tag = pick([{ Key: UID }, { Key: CLUSTER, Value: "c1" }, { Key: EXTRA }]);
          await onBoth(
            (side, id) => side.aws.ec2.send(new DeleteTagsCommand({ Resources: [id], Tags: [tag] })),
            pick(live),
          );
        } else if (roll < 0.9) {
          const label = live.splice(Math.floor(next() * live.length), 1)[0]!;
          await onBoth(
            (side, id) => side.aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: id })),
            label,
          );
        }
        if (step % 10 !== 0) continue;

        const one = pick(live);
        const another = pick(live);
        // Drawn here: each question is asked of both sides, with the same values.
        const u = uid();
        const u2 = uid();
        const questions: [string, (side: Side) => Filter[]][] = [
          ["one id", (side) => [{ Name: "group-id", Values: [side.groupIds.get(one)!] }]],
          [
            "two ids",
            (side) => [{ Name: "group-id", Values: [side.groupIds.get(another)!, side.groupIds.get(one)!] }],
          ],
          ["a name", () => [{ Name: "group-name", Values: [one.split("/")[1]!] }]],
          [
            "a name in a VPC",
            (side) => [
              { Name: "vpc-id", Values: [side.otherVpcId] },
              { Name: "group-name", Values: [one.split("/")[1]!] },
            ],
          ],
          ["a uid", () => [{ Name: `tag:${UID}`, Values: [u] }]],
          [
            "cluster and uid",
            () => [
              { Name: `tag:${CLUSTER}`, Values: ["c1"] },
              { Name: `tag:${UID}`, Values: [u, u2] },
            ],
          ],
          ["a key few have", () => [{ Name: "tag-key", Values: [EXTRA] }]],
          ["cluster (many)", () => [{ Name: `tag:${CLUSTER}`, Values: ["c1"] }]],
          ["names by pattern", () => [{ Name: "group-name", Values: ["sg-1*"] }]],
          ["uids by pattern", () => [{ Name: `tag:${UID}`, Values: ["u1?"] }]],
          ["a VPC", (side) => [{ Name: "vpc-id", Values: [side.vpcId] }]],
        ];
        for (const [what, filters] of questions) {
          const [fromPatched, fromPlain] = await Promise.all([
            groupsOf(patched, filters(patched)),
            groupsOf(plain, filters(plain)),
          ]);
          expect(fromPatched, `step ${step}, ${what}: ${JSON.stringify(filters(plain))}`).toEqual(fromPlain);
          compared += fromPlain.length;
        }
      }
      expect(compared).toBeGreaterThan(100);
      expect(await counter(patched.url, "security-group-index-answers")).toBeGreaterThan(
        indexAnswersBefore + 50,
      );
      expect(await counter(plain.url, "security-group-index-answers")).toBe(0);
    },
  );
});
