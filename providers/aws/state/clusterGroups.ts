// The cluster's security groups and security-group rules, as EC2 lists them by the cluster's tag: one
// DescribeSecurityGroups and one DescribeSecurityGroupRules a page, shared by everything that needs them — the index
// of the Services' own groups and per-Service rules (securityGroupIndex.ts), the shared backend group and its range
// rules (../securityGroups/sharedBackend.ts) and orphan collection, which reads them afresh and so leaves them read for the passes
// that follow it. Each used to read its own share of the same groups and rules (EC2 answers a tag filter by
// scanning the region's groups), a new Service on a cold controller paying four such calls.
import {
  type SecurityGroup,
  type SecurityGroupRule,
  paginateDescribeSecurityGroups,
} from "@aws-sdk/client-ec2";
import { securityGroupRulesWhere } from "../securityGroups/backendGroups.ts";
import { eachPage, type AwsClients } from "../clients.ts";
import { TAG } from "../names.ts";

export interface ClusterGroupsRead {
  /** Its place in the order of marks and reads: it shows every change marked before it (a lower mark). */
  seq: number;
  at: number;
  groups: SecurityGroup[];
  rules: SecurityGroupRule[];
}

export class ClusterGroups {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private counter = 0;
  private last: ClusterGroupsRead | undefined;
  private loading: { seq: number; read: Promise<ClusterGroupsRead> } | undefined;

  constructor(clients: AwsClients, cluster: string) {
    this.clients = clients;
    this.cluster = cluster;
  }

  /** Marks a change Portico is about to make or has made: reads that began before it may not show it. */
  mark(): number {
    return ++this.counter;
  }

  /** A read no older than `maxAgeMs` that began after the mark `after` (one under way counts as new). */
  async read(maxAgeMs: number, after = 0): Promise<ClusterGroupsRead> {
    for (;;) {
      const last = this.last;
      if (last && last.seq > after && Date.now() - last.at < maxAgeMs) return last;
      if (this.loading && this.loading.seq > after) return this.loading.read;
      if (this.loading) {
        await this.loading.read.catch(() => undefined);
        continue;
      }
      const seq = ++this.counter;
      const read = this.load(seq).finally(() => (this.loading = undefined));
      this.loading = { seq, read };
      return read;
    }
  }

  /** Nothing read is trusted any more (a new leadership term). */
  forget(): void {
    this.last = undefined;
  }

  private async load(seq: number): Promise<ClusterGroupsRead> {
    const at = Date.now();
    const filter = { Name: `tag:${TAG.cluster}`, Values: [this.cluster] };
    const [groups, rules] = await Promise.all([
      this.groups(filter),
      securityGroupRulesWhere(this.clients, [filter]),
    ]);
    const read = { seq, at, groups, rules };
    if (!this.last || this.last.seq < seq) this.last = read;
    return read;
  }

  private async groups(filter: { Name: string; Values: string[] }): Promise<SecurityGroup[]> {
    const out: SecurityGroup[] = [];
    await eachPage(
      "ec2:DescribeSecurityGroups",
      paginateDescribeSecurityGroups({ client: this.clients.ec2 }, { Filters: [filter], MaxResults: 1000 }),
      (page) => out.push(...(page.SecurityGroups ?? [])),
    );
    return out;
  }
}

/** A tag's value on a group or rule. */
export function tagOf(
  resource: { Tags?: { Key?: string; Value?: string }[] },
  key: string,
): string | undefined {
  return resource.Tags?.find((t) => t.Key === key)?.Value;
}
