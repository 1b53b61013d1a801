// How moto's answer time per call grows with the number of Services an account holds: the calls Portico makes for
// one Service that find resources by tag, timed at several sizes of account. AWS answers these in about the same
// time whatever the account holds; an emulator that does not makes every test with many Services slow.
//
//   node test/env/motoScaling.ts [--plain] [sizes...]     (default sizes 10 100 500 1000)
//
// `make bench-moto` runs it with and without the patches and keeps both in bench/results/moto.json.
// --plain runs moto's own server instead of the wrapper with tag indexes (test/env/moto_server.py), to compare.
// Each size is reached by adding Services to the same account: a security group, a target group and a network
// load balancer each, tagged as Portico tags them. A row is the median milliseconds of one call at each size.
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand, type Filter } from "@aws-sdk/client-ec2";
import {
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
  type TagFilter,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { TestAws } from "../harness/aws.ts";
import { startMoto } from "../harness/awsEmulator.ts";
import { TAG } from "../../providers/aws/names.ts";

process.env.AWS_REGION ??= "us-east-1";
process.env.AWS_ACCESS_KEY_ID ??= "scaling";
process.env.AWS_SECRET_ACCESS_KEY ??= "scaling";

const CLUSTER = "scaling";
const ELB_TYPES = ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup"];
// Samples per call and size; a call slower than the budget is sampled fewer times (at least once).
const SAMPLES = 7;
const BUDGET_MS = 4000;

interface Service {
  uid: string;
  groupId: string;
  targetGroupArn: string;
  targetGroupName: string;
  loadBalancerArn: string;
  loadBalancerName: string;
}

async function motoServerPath(): Promise<string> {
  const setup = join(import.meta.dirname, "setup.sh");
  const { stdout } = await promisify(execFile)(setup, ["moto"], { maxBuffer: 1 << 20 });
  return (JSON.parse(stdout) as { motoServer: string }).motoServer;
}

async function loadAverage(): Promise<string> {
  return (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
}

function tags(i: number, uid: string, resource: string): { Key: string; Value: string }[] {
  return [
    { Key: TAG.cluster, Value: CLUSTER },
    { Key: TAG.service, Value: `ns-${i % 7}/svc-${i}` },
    { Key: TAG.serviceUid, Value: uid },
    { Key: TAG.resource, Value: resource },
  ];
}

async function addService(aws: TestAws, vpcId: string, subnets: string[], i: number): Promise<Service> {
  const uid = randomUUID();
  const record = Object.fromEntries(tags(i, uid, "backend").map((t) => [t.Key, t.Value]));
  const groupId = await aws.createSecurityGroup(vpcId, `svc-${i}-backend`, record);
  const targetGroupName = `tg-${i}`;
  const tg = await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: targetGroupName,
      Protocol: "TCP",
      Port: 80,
      VpcId: vpcId,
      TargetType: "instance",
      Tags: tags(i, uid, "tg-80"),
    }),
  );
  const loadBalancerName = `lb-${i}`;
  const lb = await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: loadBalancerName,
      Type: "network",
      Scheme: "internal",
      Subnets: subnets,
      Tags: tags(i, uid, "lb"),
    }),
  );
  return {
    uid,
    groupId,
    targetGroupArn: tg.TargetGroups![0]!.TargetGroupArn!,
    targetGroupName,
    loadBalancerArn: lb.LoadBalancers![0]!.LoadBalancerArn!,
    loadBalancerName,
  };
}

async function median(call: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  const start = performance.now();
  while (times.length < SAMPLES && (times.length === 0 || performance.now() - start < BUDGET_MS)) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** The calls timed, each for a Service picked from the account (a different one at each size). */
function calls(
  aws: TestAws,
  tagging: ResourceGroupsTaggingAPIClient,
  services: Service[],
): [string, () => Promise<unknown>][] {
  const s = services[Math.floor(services.length / 2)]!;
  const few = services.slice(0, 5);
  const cluster: Filter = { Name: `tag:${TAG.cluster}`, Values: [CLUSTER] };
  const sg = (Filters: Filter[]) => () => aws.ec2.send(new DescribeSecurityGroupsCommand({ Filters }));
  const resources =
    (TagFilters: TagFilter[], ResourcesPerPage = 100) =>
    () =>
      tagging.send(
        new GetResourcesCommand({
          TagFilters,
          ResourceTypeFilters: ELB_TYPES,
          ResourcesPerPage,
          TagsPerPage: 500,
        }),
      );
  return [
    [
      "ec2 DescribeSecurityGroups tag:cluster + tag:service-uid",
      sg([cluster, { Name: `tag:${TAG.serviceUid}`, Values: [s.uid] }]),
    ],
    [
      "ec2 DescribeSecurityGroups tag:cluster + tag:resource (2 values)",
      sg([cluster, { Name: `tag:${TAG.resource}`, Values: ["range", "none"] }]),
    ],
    ["ec2 DescribeSecurityGroups group-id", sg([{ Name: "group-id", Values: [s.groupId] }])],
    [
      "ec2 DescribeSecurityGroups group-name",
      sg([{ Name: "group-name", Values: [`svc-${services.indexOf(s)}-backend`] }]),
    ],
    [
      "ec2 DescribeSubnets tag-key (role)",
      () =>
        aws.ec2.send(
          new DescribeSubnetsCommand({
            Filters: [{ Name: "tag-key", Values: ["kubernetes.io/role/internal-elb"] }],
          }),
        ),
    ],
    ["tagging GetResources service-uid=<uid>", resources([{ Key: TAG.serviceUid, Values: [s.uid] }])],
    // Pages of 10, as full at 10 Services (20 resources) as at 1000: a page of 100 would time what it carries.
    [
      "tagging GetResources cluster=<c> (first page of 10)",
      resources([{ Key: TAG.cluster, Values: [CLUSTER] }], 10),
    ],
    ["tagging GetResources tag key only (first page of 10)", resources([{ Key: TAG.serviceUid }], 10)],
    [
      "elbv2 DescribeTags (5 ARNs)",
      () => aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: few.map((f) => f.loadBalancerArn) })),
    ],
    [
      "elbv2 DescribeTargetGroups by ARN",
      () => aws.elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: [s.targetGroupArn] })),
    ],
    [
      "elbv2 DescribeTargetGroups by name",
      () => aws.elbv2.send(new DescribeTargetGroupsCommand({ Names: [s.targetGroupName] })),
    ],
    [
      "elbv2 DescribeLoadBalancers by ARN",
      () => aws.elbv2.send(new DescribeLoadBalancersCommand({ LoadBalancerArns: [s.loadBalancerArn] })),
    ],
    [
      "elbv2 DescribeLoadBalancers by name",
      () => aws.elbv2.send(new DescribeLoadBalancersCommand({ Names: [s.loadBalancerName] })),
    ],
  ];
}

/** Median milliseconds per call at each size (`calls` by name, one value per size), and the load after each. */
export interface MotoScaling {
  server: string;
  sizes: number[];
  calls: Record<string, number[]>;
  loadAfterEachSize: string[];
}

export async function motoScaling(sizes: number[], plain: boolean): Promise<MotoScaling> {
  const dir = await mkdtemp(join(tmpdir(), "portico-moto-scaling-"));
  const moto = await startMoto(await motoServerPath(), dir, 1, { plain });
  try {
    const aws = await TestAws.fresh(moto.endpoint.url);
    const tagging = new ResourceGroupsTaggingAPIClient({ endpoint: moto.endpoint.url });
    const network = await aws.createNetwork(CLUSTER, { internal: true });
    const subnets = network.subnets.map((s) => s.subnetId);
    const services: Service[] = [];
    const timed: Record<string, number[]> = {};
    const loads: string[] = [];
    for (const size of sizes) {
      const t = performance.now();
      while (services.length < size)
        services.push(await addService(aws, network.vpcId, subnets, services.length));
      process.stderr.write(
        `${size} Services (${((performance.now() - t) / 1000).toFixed(1)} s to add), timing...\n`,
      );
      // The first size pays for moto's warm-up (imports, first responses, the SDK's connections) unless every
      // call has been made a few times before.
      if (loads.length === 0) for (const [, call] of calls(aws, tagging, services)) await median(call);
      for (const [name, call] of calls(aws, tagging, services)) (timed[name] ??= []).push(await median(call));
      loads.push(await loadAverage());
    }
    return {
      server: plain
        ? "moto's own server (PORTICO_MOTO_PLAIN=1)"
        : "test/env/moto_server.py, with its patches",
      sizes,
      calls: timed,
      loadAfterEachSize: loads,
    };
  } finally {
    await moto.process.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function scalingTable(result: MotoScaling): string {
  const names = Object.keys(result.calls);
  const width = Math.max(...names.map((n) => n.length));
  const head = `${"median ms per call".padEnd(width)} | ${result.sizes.map((n) => `N=${n}`.padStart(8)).join(" | ")}`;
  const rows = names.map(
    (n) => `${n.padEnd(width)} | ${result.calls[n]!.map((ms) => ms.toFixed(1).padStart(8)).join(" | ")}`,
  );
  return [
    `moto: ${result.server}`,
    head,
    "-".repeat(head.length),
    ...rows,
    `load average (1/5/15 min) after each size: ${result.loadAfterEachSize.join("; ")}`,
  ].join("\n");
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const sizes = args.filter((a) => /^\d+$/.test(a)).map(Number);
  console.log(
    scalingTable(await motoScaling(sizes.length ? sizes : [10, 100, 500, 1000], args.includes("--plain"))),
  );
}
