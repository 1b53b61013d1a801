// Where a Service's own security group and its per-Service backend rules are read from. Read for each Service
// alone, that is two EC2 calls per reconcile, which EC2 answers by scanning every group of the region; read for the
// whole cluster at once (the index), it is one call a page, at most once a minute (cacheAge.ts). The index is Portico's own view
// of what it wrote: a Service whose groups or rules Portico changed is read alone again (and put back in the
// index) until the next full read, so nothing Portico did is ever missed.
import { DescribeSecurityGroupsCommand, type IpPermission, type SecurityGroup } from "@aws-sdk/client-ec2";
import type { ServiceRef } from "../provider.ts";
import { observeBackendRules } from "./backendGroups.ts";
import { call, type AwsClients } from "./clients.ts";
import type { IngressRule, ObservedBackendRule, ObservedSecurityGroup } from "./model.ts";
import { securityGroupName, TAG } from "./names.ts";
import { clusterCacheMs } from "./cacheAge.ts";

export interface GroupSource {
  securityGroups(service: ServiceRef): Promise<ObservedSecurityGroup[]>;
  backendRules(service: ServiceRef): Promise<ObservedBackendRule[]>;
}

/** Reads for the one Service: its group by name (EC2 indexes names), its rules by their tags. */
export function directGroupSource(clients: AwsClients, cluster: string): GroupSource {
  return {
    async securityGroups(service) {
      const out = await call("ec2:DescribeSecurityGroups", () =>
        clients.ec2.send(
          new DescribeSecurityGroupsCommand({
            Filters: [{ Name: "group-name", Values: [securityGroupName(cluster, service)] }],
          }),
        ),
      );
      // Ownership is checked on what came back: the name alone could be anyone's.
      return (out.SecurityGroups ?? []).filter((g) => ownedBy(g, cluster, service.uid)).map(observedGroup);
    },
    async backendRules(service) {
      return (await observeBackendRules(clients, cluster, service.uid)).map(withoutUid);
    },
  };
}

export class SecurityGroupIndex implements GroupSource {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly direct: GroupSource;
  private snapshot:
    | { at: number; groups: Map<string, ObservedSecurityGroup[]>; rules: Map<string, ObservedBackendRule[]> }
    | undefined;
  private loading: Promise<NonNullable<SecurityGroupIndex["snapshot"]>> | undefined;
  /**
   * Services whose groups or rules Portico changed since the snapshot was taken, each with the count of the last
   * change: read alone until a snapshot started after that change.
   */
  private readonly changed = new Map<string, number>();
  private changes = 0;

  constructor(clients: AwsClients, cluster: string) {
    this.clients = clients;
    this.cluster = cluster;
    this.direct = directGroupSource(clients, cluster);
  }

  /** Nothing read is trusted any more (a new leadership term): the next look reads the cluster again. */
  forget(): void {
    this.snapshot = undefined;
  }

  async securityGroups(service: ServiceRef): Promise<ObservedSecurityGroup[]> {
    if (this.changed.has(service.uid)) return this.direct.securityGroups(service);
    return (await this.current()).groups.get(service.uid) ?? [];
  }

  async backendRules(service: ServiceRef): Promise<ObservedBackendRule[]> {
    if (this.changed.has(service.uid)) return this.direct.backendRules(service);
    return (await this.current()).rules.get(service.uid) ?? [];
  }

  /**
   * Portico is about to change, or has just changed, the Service's groups or rules (called both before and after
   * the writes, failed or not): what the index holds may be stale.
   */
  touched(serviceUid: string): void {
    this.changed.set(serviceUid, ++this.changes);
  }

  private async current() {
    if (this.snapshot && Date.now() - this.snapshot.at < clusterCacheMs()) return this.snapshot;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load() {
    // A change told (after its writes) before the reads begin is in the snapshot; a later one may not be.
    const started = Date.now();
    const startedAt = this.changes;
    const [groups, rules] = await Promise.all([
      this.allGroups(),
      observeBackendRules(this.clients, this.cluster),
    ]);
    const byService = new Map<string, ObservedBackendRule[]>();
    for (const r of rules)
      byService.set(r.serviceUid, [...(byService.get(r.serviceUid) ?? []), withoutUid(r)]);
    this.snapshot = { at: started, groups, rules: byService };
    for (const [uid, at] of this.changed) if (at <= startedAt) this.changed.delete(uid);
    return this.snapshot;
  }

  private async allGroups(): Promise<Map<string, ObservedSecurityGroup[]>> {
    const out = new Map<string, ObservedSecurityGroup[]>();
    let token: string | undefined;
    do {
      const page = await call("ec2:DescribeSecurityGroups", () =>
        this.clients.ec2.send(
          new DescribeSecurityGroupsCommand({
            Filters: [
              { Name: `tag:${TAG.cluster}`, Values: [this.cluster] },
              { Name: "tag-key", Values: [TAG.serviceUid] },
            ],
            MaxResults: 1000,
            ...(token ? { NextToken: token } : {}),
          }),
        ),
      );
      for (const g of page.SecurityGroups ?? []) {
        const uid = g.Tags?.find((t) => t.Key === TAG.serviceUid)?.Value;
        // Only the group named for the Service is its own (a name is a pure function of cluster and UID).
        if (!uid || !ownedBy(g, this.cluster, uid)) continue;
        out.set(uid, [...(out.get(uid) ?? []), observedGroup(g)]);
      }
      token = page.NextToken || undefined;
    } while (token);
    return out;
  }
}

function ownedBy(g: SecurityGroup, cluster: string, uid: string): boolean {
  const tags = new Map((g.Tags ?? []).map((t) => [t.Key, t.Value]));
  return tags.get(TAG.cluster) === cluster && tags.get(TAG.serviceUid) === uid;
}

function observedGroup(g: SecurityGroup): ObservedSecurityGroup {
  return { id: g.GroupId!, name: g.GroupName!, ingress: (g.IpPermissions ?? []).flatMap(rules) };
}

function withoutUid({ serviceUid: _uid, ...rule }: ObservedBackendRule & { serviceUid: string }) {
  return rule;
}

function rules(p: IpPermission): IngressRule[] {
  if (p.IpProtocol !== "tcp" && p.IpProtocol !== "udp") return [];
  if (p.FromPort === undefined || p.FromPort !== p.ToPort) return [];
  const protocol = p.IpProtocol;
  const port = p.FromPort;
  return [
    ...(p.IpRanges ?? []).map((r) => r.CidrIp!),
    ...(p.Ipv6Ranges ?? []).map((r) => r.CidrIpv6!),
    ...(p.PrefixListIds ?? []).map((r) => r.PrefixListId!),
  ].map((cidr) => ({ protocol, port, cidr }));
}
