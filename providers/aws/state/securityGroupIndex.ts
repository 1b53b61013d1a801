// Where a Service's own security group and its per-Service backend rules are read from. Read for each Service
// alone, that is two EC2 calls per reconcile, which EC2 answers by scanning every group of the region; read for the
// whole cluster at once (the index, from the cluster's groups and rules: clusterGroups.ts), it is one call a page,
// at most once a minute (cacheAge.ts). The index is Portico's own view
// of what it wrote: a Service whose groups or rules Portico changed is read alone again (and put back in the
// index) until the next full read, so nothing Portico did is ever missed.
import { DescribeSecurityGroupsCommand, type IpPermission, type SecurityGroup } from "@aws-sdk/client-ec2";
import type { ServiceRef } from "../../provider.ts";
import { backendRulesFrom, observeBackendRules } from "../securityGroups/backendGroups.ts";
import type { ClusterGroups, ClusterGroupsRead } from "./clusterGroups.ts";
import { call, type AwsClients } from "../clients.ts";
import type { IngressRule, ObservedBackendRule, ObservedSecurityGroup } from "../model.ts";
import { securityGroupName, TAG } from "../names.ts";
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
  private readonly reads: ClusterGroups;
  private readonly cluster: string;
  private readonly direct: GroupSource;
  /** Each read of the cluster's groups and rules, by Service UID (derived once per read). */
  private readonly derived = new WeakMap<ClusterGroupsRead, Indexed>();
  /** Not before this mark (a new leadership term: nothing read earlier is trusted). */
  private after = 0;
  /**
   * Services whose groups or rules Portico changed, each with the mark of the last change: read alone until a
   * read of the cluster began after that change.
   */
  private readonly changed = new Map<string, number>();

  constructor(clients: AwsClients, cluster: string, reads: ClusterGroups) {
    this.reads = reads;
    this.cluster = cluster;
    this.direct = directGroupSource(clients, cluster);
  }

  /** Nothing read is trusted any more (a new leadership term): the next look reads the cluster again. */
  forget(): void {
    this.after = this.reads.mark();
  }

  async securityGroups(service: ServiceRef): Promise<ObservedSecurityGroup[]> {
    const index = await this.current(service.uid);
    return index ? (index.groups.get(service.uid) ?? []) : this.direct.securityGroups(service);
  }

  async backendRules(service: ServiceRef): Promise<ObservedBackendRule[]> {
    const index = await this.current(service.uid);
    return index ? (index.rules.get(service.uid) ?? []) : this.direct.backendRules(service);
  }

  /**
   * Portico is about to change, or has just changed, the Service's groups or rules (called both before and after
   * the writes, failed or not): what the index holds may be stale.
   */
  touched(serviceUid: string): void {
    this.changed.set(serviceUid, this.reads.mark());
  }

  /** The index, or undefined when the Service changed since the read it comes from (then it is read alone). */
  private async current(uid: string): Promise<Indexed | undefined> {
    const read = await this.reads.read(clusterCacheMs(), this.after);
    const change = this.changed.get(uid);
    if (change !== undefined) {
      if (change > read.seq) return undefined;
      this.changed.delete(uid);
    }
    return this.indexOf(read);
  }

  /** Each Service's own groups and rules in a read of the cluster's (derived once per read). */
  indexOf(read: ClusterGroupsRead): Indexed {
    let index = this.derived.get(read);
    if (!index) {
      index = indexed(read, this.cluster);
      this.derived.set(read, index);
    }
    return index;
  }
}

export interface Indexed {
  groups: Map<string, ObservedSecurityGroup[]>;
  rules: Map<string, ObservedBackendRule[]>;
}

function indexed(read: ClusterGroupsRead, cluster: string): Indexed {
  const groups = new Map<string, ObservedSecurityGroup[]>();
  for (const g of read.groups) {
    const uid = g.Tags?.find((t) => t.Key === TAG.serviceUid)?.Value;
    // Only a group tagged for this cluster and the Service is its own (the shared backend group has no UID).
    if (!uid || !ownedBy(g, cluster, uid)) continue;
    groups.set(uid, [...(groups.get(uid) ?? []), observedGroup(g)]);
  }
  const rules = new Map<string, ObservedBackendRule[]>();
  for (const r of backendRulesFrom(read.rules))
    rules.set(r.serviceUid, [...(rules.get(r.serviceUid) ?? []), withoutUid(r)]);
  return { groups, rules };
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
