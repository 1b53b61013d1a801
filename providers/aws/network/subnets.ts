// Which subnets (and so which VPC) a Service's NLB goes into: named by annotation, or discovered by the
// role tags EKS users already put on their subnets. Looked up through EC2, and the answer kept in the cluster's
// reads (../state/clusterReads.ts, aged by ../state/cacheAge.ts), since subnets change rarely and every Service of
// a scheme shares it.
import { DescribeSubnetsCommand, type DescribeSubnetsCommandInput, type Subnet } from "@aws-sdk/client-ec2";
import { CloudError, ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import type { AwsClients } from "../clients.ts";
import { call } from "../clients.ts";
import type { Network } from "../model.ts";
import type { AgedReads } from "../state/agedReads.ts";

export class SubnetResolver {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly kept: AgedReads<Network>;

  constructor(clients: AwsClients, cluster: string, kept: AgedReads<Network>) {
    this.clients = clients;
    this.cluster = cluster;
    this.kept = kept;
  }

  resolve(scheme: "internal" | "internet-facing", named: string[]): Promise<Network> {
    const key = named.length ? `named:${[...named].sort().join(",")}` : `role:${scheme}`;
    return this.kept.get(key, () => (named.length ? this.named(named) : this.discover(scheme)));
  }

  private async named(names: string[]): Promise<Network> {
    const ids = names.filter((n) => n.startsWith("subnet-"));
    const tagNames = names.filter((n) => !n.startsWith("subnet-"));
    const found: Subnet[] = [];
    if (ids.length) {
      // Naming one missing ID fails the whole call; then look them up by filter to name the missing ones.
      const byId = await this.describe({ SubnetIds: ids }).catch((err: unknown) => {
        if (err instanceof CloudError && err.code.endsWith("NotFound"))
          return this.describe({ Filters: [{ Name: "subnet-id", Values: ids }] });
        throw err;
      });
      found.push(...byId);
    }
    if (tagNames.length)
      found.push(...(await this.describe({ Filters: [{ Name: "tag:Name", Values: tagNames }] })));
    const missing = names.filter(
      (n) => !found.some((s) => s.SubnetId === n || s.Tags?.some((t) => t.Key === "Name" && t.Value === n)),
    );
    if (missing.length) {
      throw new ConfigurationError(
        "SubnetNotFound",
        `metadata.annotations[${AWS_ANNOTATIONS.subnets}]`,
        `no subnet ${missing.join(", ")}`,
        "name existing subnet IDs or Name tags",
      );
    }
    return this.network(found, `metadata.annotations[${AWS_ANNOTATIONS.subnets}]`);
  }

  private async discover(scheme: "internal" | "internet-facing"): Promise<Network> {
    const role = scheme === "internal" ? "kubernetes.io/role/internal-elb" : "kubernetes.io/role/elb";
    const all = await this.describe({ Filters: [{ Name: "tag-key", Values: [role] }] });
    const clusterTag = `kubernetes.io/cluster/${this.cluster}`;
    // A subnet tagged for some other cluster only is not ours to use; untagged ones are shared by all.
    const usable = all.filter((s) => {
      const clusterTags = (s.Tags ?? []).filter((t) => t.Key?.startsWith("kubernetes.io/cluster/"));
      return clusterTags.length === 0 || clusterTags.some((t) => t.Key === clusterTag);
    });
    const field = `metadata.annotations[${AWS_ANNOTATIONS.subnets}]`;
    if (!usable.length) {
      throw new ConfigurationError(
        "NoSubnets",
        field,
        `no subnet is tagged ${role}=1 for cluster ${this.cluster}`,
        `tag one subnet per zone with ${role}=1, or name subnets in the annotation`,
      );
    }
    // One per zone: prefer subnets tagged for this cluster, then the lowest ID, so the choice is stable.
    const forUs = (s: Subnet) => (s.Tags?.some((t) => t.Key === clusterTag) ? 0 : 1);
    const ranked = [...usable].sort(
      (a, b) => forUs(a) - forUs(b) || (a.SubnetId ?? "").localeCompare(b.SubnetId ?? ""),
    );
    const perZone = new Map<string, Subnet>();
    for (const s of ranked) if (!perZone.has(s.AvailabilityZone!)) perZone.set(s.AvailabilityZone!, s);
    return this.network([...perZone.values()], field);
  }

  private network(subnets: Subnet[], field: string): Network {
    const vpcs = new Set(subnets.map((s) => s.VpcId));
    if (vpcs.size > 1)
      throw new ConfigurationError(
        "SubnetsInSeveralVpcs",
        field,
        `the subnets are in several VPCs (${[...vpcs].join(", ")})`,
        "use subnets of one VPC",
      );
    const zones = subnets.map((s) => s.AvailabilityZone);
    if (new Set(zones).size !== zones.length)
      throw new ConfigurationError(
        "SubnetsShareZone",
        field,
        "two subnets are in the same availability zone",
        "name at most one subnet per zone",
      );
    const cidrs = Object.fromEntries(
      subnets.map((s) => [
        s.SubnetId!,
        {
          ipv4: s.CidrBlock ? [s.CidrBlock] : [],
          ipv6: (s.Ipv6CidrBlockAssociationSet ?? []).map((a) => a.Ipv6CidrBlock!).filter(Boolean),
        },
      ]),
    );
    return { vpcId: subnets[0]!.VpcId!, subnets: subnets.map((s) => s.SubnetId!).sort(), cidrs };
  }

  private async describe(input: DescribeSubnetsCommandInput): Promise<Subnet[]> {
    const out = await call("ec2:DescribeSubnets", () =>
      this.clients.ec2.send(new DescribeSubnetsCommand(input)),
    );
    return out.Subnets ?? [];
  }
}
