// The targets' own security groups, and Portico's rules in them. A target's group is found as the AWS Load
// Balancer Controller finds it: the primary network interface of a node's instance (instance targets) or the
// interface holding a pod's IP (ip targets); of several groups on it, the one tagged kubernetes.io/cluster/<name>.
// Answers are cached (../state/cacheAge.ts) and shared by every Service (nodes are the same for all), so a reconcile makes at
// most one DescribeInstances or DescribeNetworkInterfaces call, and none while the answers are fresh.
import {
  AuthorizeSecurityGroupIngressCommand,
  DescribeVpcsCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
  type SecurityGroupRule,
  paginateDescribeInstances,
  paginateDescribeNetworkInterfaces,
  paginateDescribeSecurityGroupRules,
} from "@aws-sdk/client-ec2";
import { CloudError } from "../../errors.ts";
import type { ServiceRef } from "../../provider.ts";
import { backendRuleDescription } from "./backendRules.ts";
import { eachPage, call, type AwsClients } from "../clients.ts";
import type { BackendRule, ObservedBackendRule } from "../model.ts";
import { ownershipTags, TAG } from "../names.ts";
import { clusterCacheMs } from "../state/cacheAge.ts";

const FILTER_VALUES = 200;

interface Interface {
  groups: string[];
}

/** Why a target has no backend group, for the Service's Events. */
export interface Unresolved {
  target: string;
  reason: string;
}

export class BackendGroupResolver {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly cache = new Map<string, { at: number; groupId?: string; reason?: string }>();
  private readonly vpcs = new Map<string, { at: number; cidrs: { ipv4: string[]; ipv6: string[] } }>();
  private readonly lookups = new Map<string, Promise<void>>();

  constructor(clients: AwsClients, cluster: string) {
    this.clients = clients;
    this.cluster = cluster;
  }

  /** Nothing cached is trusted any more (a new leadership term). */
  forget(): void {
    this.cache.clear();
    this.vpcs.clear();
  }

  /** Each target's backend security group; targets without one are returned with the reason. */
  async resolve(
    targetType: "instance" | "ip",
    ids: string[],
    vpcId: string,
  ): Promise<{ groups: Map<string, string>; unresolved: Unresolved[] }> {
    const now = Date.now();
    const stale = [...new Set(ids)].filter((id) => {
      const hit = this.cache.get(`${vpcId}/${id}`);
      return !hit || now - hit.at >= clusterCacheMs();
    });
    if (stale.length) {
      // Reconciles running together mostly ask about the same nodes: one lookup answers them all.
      const key = `${targetType}/${vpcId}/${stale.sort().join(",")}`;
      let lookup = this.lookups.get(key);
      if (!lookup) {
        lookup = this.lookUp(targetType, stale, vpcId, now).finally(() => this.lookups.delete(key));
        this.lookups.set(key, lookup);
      }
      await lookup;
    }
    const groups = new Map<string, string>();
    const unresolved: Unresolved[] = [];
    for (const id of new Set(ids)) {
      const entry = this.cache.get(`${vpcId}/${id}`)!;
      if (entry.groupId) groups.set(id, entry.groupId);
      else unresolved.push({ target: id, reason: entry.reason ?? "no security group" });
    }
    return { groups, unresolved };
  }

  private async lookUp(targetType: "instance" | "ip", ids: string[], vpcId: string, now: number) {
    const interfaces =
      targetType === "instance" ? await this.instances(ids) : await this.podInterfaces(ids, vpcId);
    const tagged = await this.clusterTagged([...interfaces.values()].filter((i) => i.groups.length > 1));
    for (const id of ids)
      this.cache.set(`${vpcId}/${id}`, { at: now, ...this.choose(id, interfaces.get(id), tagged) });
  }

  /** The VPC's IPv4 and IPv6 CIDRs (cached like the rest): where an internal NLB's clients are. */
  async vpcCidrs(vpcId: string): Promise<{ ipv4: string[]; ipv6: string[] }> {
    const hit = this.vpcs.get(vpcId);
    if (hit && Date.now() - hit.at < clusterCacheMs()) return hit.cidrs;
    const out = await call("ec2:DescribeVpcs", () =>
      this.clients.ec2.send(new DescribeVpcsCommand({ VpcIds: [vpcId] })),
    );
    const vpc = out.Vpcs?.[0];
    const cidrs = {
      ipv4: (vpc?.CidrBlockAssociationSet ?? [])
        .filter((a) => a.CidrBlockState?.State !== "disassociated")
        .map((a) => a.CidrBlock!)
        .filter(Boolean),
      ipv6: (vpc?.Ipv6CidrBlockAssociationSet ?? []).map((a) => a.Ipv6CidrBlock!).filter(Boolean),
    };
    if (!cidrs.ipv4.length && vpc?.CidrBlock) cidrs.ipv4.push(vpc.CidrBlock);
    this.vpcs.set(vpcId, { at: Date.now(), cidrs });
    return cidrs;
  }

  private choose(
    id: string,
    found: Interface | undefined,
    tagged: Set<string>,
  ): { groupId?: string; reason?: string } {
    if (!found) return { reason: `no network interface in the VPC holds ${id}` };
    if (found.groups.length === 1) return { groupId: found.groups[0]! };
    const candidates = found.groups.filter((g) => tagged.has(g));
    if (candidates.length === 1) return { groupId: candidates[0]! };
    return {
      reason: `its network interface has ${found.groups.length} security groups and ${candidates.length} of them are tagged kubernetes.io/cluster/${this.cluster} (exactly one must be)`,
    };
  }

  private async instances(ids: string[]): Promise<Map<string, Interface>> {
    const out = new Map<string, Interface>();
    // A filter, not InstanceIds: one terminated instance must not fail the whole lookup.
    for (let i = 0; i < ids.length; i += FILTER_VALUES) {
      const filter = { Name: "instance-id", Values: ids.slice(i, i + FILTER_VALUES) };
      await eachPage(
        "ec2:DescribeInstances",
        paginateDescribeInstances({ client: this.clients.ec2 }, { Filters: [filter] }),
        (page) => {
          for (const instance of (page.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
            const primary = (instance.NetworkInterfaces ?? []).find((n) => n.Attachment?.DeviceIndex === 0);
            const groups = (primary?.Groups ?? instance.SecurityGroups ?? []).map((g) => g.GroupId!);
            out.set(instance.InstanceId!, { groups });
          }
        },
      );
    }
    return out;
  }

  private async podInterfaces(all: string[], vpcId: string): Promise<Map<string, Interface>> {
    const out = new Map<string, Interface>();
    const wanted = new Set(all);
    // IPv4 and IPv6 pod addresses are looked up by different filters (one family per target group).
    const ipv6 = all.some((ip) => ip.includes(":"));
    const ips = all.filter((ip) => ip.includes(":") === ipv6);
    const filter = ipv6 ? "ipv6-addresses.ipv6-address" : "addresses.private-ip-address";
    for (let i = 0; i < ips.length; i += FILTER_VALUES) {
      const filters = [
        { Name: "vpc-id", Values: [vpcId] },
        { Name: filter, Values: ips.slice(i, i + FILTER_VALUES) },
      ];
      await eachPage(
        "ec2:DescribeNetworkInterfaces",
        paginateDescribeNetworkInterfaces({ client: this.clients.ec2 }, { Filters: filters }),
        (page) => {
          for (const eni of page.NetworkInterfaces ?? []) {
            const groups = (eni.Groups ?? []).map((g) => g.GroupId!);
            const addresses = [
              ...(eni.PrivateIpAddresses ?? []).map((a) => a.PrivateIpAddress),
              ...(eni.Ipv6Addresses ?? []).map((a) => a.Ipv6Address),
            ];
            for (const a of addresses) if (a && wanted.has(a)) out.set(a, { groups });
          }
        },
      );
    }
    return out;
  }

  /** Of the groups on interfaces with several, those tagged for this cluster (read only when needed). */
  private async clusterTagged(interfaces: Interface[]): Promise<Set<string>> {
    const ids = [...new Set(interfaces.flatMap((i) => i.groups))];
    if (!ids.length) return new Set();
    const out = await call("ec2:DescribeSecurityGroups", () =>
      this.clients.ec2.send(
        new DescribeSecurityGroupsCommand({ Filters: [{ Name: "group-id", Values: ids }] }),
      ),
    );
    const key = `kubernetes.io/cluster/${this.cluster}`;
    return new Set(
      (out.SecurityGroups ?? []).filter((g) => g.Tags?.some((t) => t.Key === key)).map((g) => g.GroupId!),
    );
  }
}

/**
 * Portico's per-Service rules in any security group, found by their tags: the Service's alone when its UID is
 * given, else the whole cluster's (one call a page either way), each with the UID of the Service it is for.
 */
export async function observeBackendRules(
  clients: AwsClients,
  cluster: string,
  serviceUid?: string,
): Promise<(ObservedBackendRule & { serviceUid: string })[]> {
  const rules = await securityGroupRulesWhere(clients, [
    { Name: `tag:${TAG.cluster}`, Values: [cluster] },
    serviceUid
      ? { Name: `tag:${TAG.serviceUid}`, Values: [serviceUid] }
      : { Name: `tag-key`, Values: [TAG.serviceUid] },
  ]);
  return backendRulesFrom(rules);
}

/** Portico's per-Service rules among `rules` (those tagged with a Service's UID), each with that UID. */
export function backendRulesFrom(
  rules: SecurityGroupRule[],
): (ObservedBackendRule & { serviceUid: string })[] {
  return rules
    .filter((r) => r.Tags?.some((t) => t.Key === TAG.serviceUid))
    .filter((r) => !r.IsEgress && (r.IpProtocol === "tcp" || r.IpProtocol === "udp"))
    .map((r) => ({
      ruleId: r.SecurityGroupRuleId!,
      groupId: r.GroupId!,
      protocol: r.IpProtocol as "tcp" | "udp",
      port: r.FromPort!,
      source: r.ReferencedGroupInfo?.GroupId ?? r.CidrIpv4 ?? r.CidrIpv6 ?? "",
      serviceUid: r.Tags?.find((t) => t.Key === TAG.serviceUid)?.Value ?? "",
    }));
}

/** Adds rules to one backend group, each tagged as the Service's and described for people reading the console. */
export async function authorizeBackendRules(
  clients: AwsClients,
  cluster: string,
  service: ServiceRef,
  groupId: string,
  rules: BackendRule[],
): Promise<void> {
  const description = backendRuleDescription(cluster, service);
  const permission = (r: BackendRule) => {
    const from = r.source;
    return {
      IpProtocol: r.protocol,
      FromPort: r.port,
      ToPort: r.port,
      ...(from.includes(":")
        ? { Ipv6Ranges: [{ CidrIpv6: from, Description: description }] }
        : { IpRanges: [{ CidrIp: from, Description: description }] }),
    };
  };
  const tags = Object.entries(ownershipTags(cluster, service, "backend-rule")).map(([Key, Value]) => ({
    Key,
    Value,
  }));
  const send = (batch: BackendRule[]) =>
    call("ec2:AuthorizeSecurityGroupIngress", () =>
      clients.ec2.send(
        new AuthorizeSecurityGroupIngressCommand({
          GroupId: groupId,
          IpPermissions: batch.map(permission),
          TagSpecifications: [{ ResourceType: "security-group-rule", Tags: tags }],
        }),
      ),
    );
  const duplicate = (err: unknown) => err instanceof CloudError && err.code === "InvalidPermission.Duplicate";
  try {
    await send(rules);
  } catch (err) {
    if (!duplicate(err)) throw err;
    // An equal rule someone else made (another Service's, or a person's) already lets the NLB in: it is left
    // alone, not taken over, and the other rules are added one by one.
    for (const rule of rules) {
      await send([rule]).catch((e: unknown) => {
        if (!duplicate(e)) throw e;
      });
    }
  }
}

/** Revokes Portico's own rules by their IDs, so an equal rule someone else made is never touched. */
export async function revokeBackendRules(
  clients: AwsClients,
  groupId: string,
  ruleIds: string[],
): Promise<void> {
  try {
    await call("ec2:RevokeSecurityGroupIngress", () =>
      clients.ec2.send(
        new RevokeSecurityGroupIngressCommand({ GroupId: groupId, SecurityGroupRuleIds: ruleIds }),
      ),
    );
  } catch (err) {
    // Gone already (the group was deleted, or the rule revoked by hand): nothing left to revoke.
    if (err instanceof CloudError && /NotFound$/.test(err.code)) return;
    throw err;
  }
}

/** Every security-group rule the filters select, a page (1000) a call. */
export async function securityGroupRulesWhere(
  clients: AwsClients,
  filters: { Name: string; Values: string[] }[],
): Promise<SecurityGroupRule[]> {
  const rules: SecurityGroupRule[] = [];
  await eachPage(
    "ec2:DescribeSecurityGroupRules",
    paginateDescribeSecurityGroupRules({ client: clients.ec2 }, { Filters: filters, MaxResults: 1000 }),
    (page) => rules.push(...(page.SecurityGroupRules ?? [])),
  );
  return rules;
}
