// The targets' own security groups, and Portico's rules in them. A target's group is found as the AWS Load
// Balancer Controller finds it: the primary network interface of a node's instance (instance targets) or the
// interface holding a pod's IP (ip targets); of several groups on it, the one tagged kubernetes.io/cluster/<name>.
// Answers are kept per target in the cluster's reads (../state/clusterReads.ts, aged by ../state/cacheAge.ts) and
// shared by every Service (nodes are the same for all), so a reconcile makes at most one DescribeInstances or
// DescribeNetworkInterfaces call for the targets not yet known, and none while the answers are fresh.
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
import type { AgedReads } from "../state/agedReads.ts";

const FILTER_VALUES = 200;

interface Interface {
  groups: string[];
}

/** Why a target has no backend group, for the Service's Events. */
export interface Unresolved {
  target: string;
  reason: string;
}

/** What is known of one target: its backend group, or why it has none. */
export interface BackendGroupAnswer {
  groupId?: string;
  reason?: string;
}

/** A VPC's IPv4 and IPv6 CIDRs. */
export interface VpcCidrs {
  ipv4: string[];
  ipv6: string[];
}

export class BackendGroupResolver {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly groups: AgedReads<BackendGroupAnswer>;
  private readonly vpcs: AgedReads<VpcCidrs>;

  constructor(
    clients: AwsClients,
    cluster: string,
    kept: { groups: AgedReads<BackendGroupAnswer>; vpcs: AgedReads<VpcCidrs> },
  ) {
    this.clients = clients;
    this.cluster = cluster;
    this.groups = kept.groups;
    this.vpcs = kept.vpcs;
  }

  /** Each target's backend security group; targets without one are returned with the reason. */
  async resolve(
    targetType: "instance" | "ip",
    ids: string[],
    vpcId: string,
  ): Promise<{ groups: Map<string, string>; unresolved: Unresolved[] }> {
    const unique = [...new Set(ids)];
    const prefix = `${vpcId}/`;
    // Reconciles running together mostly ask about the same nodes: the targets not known yet are looked up in one
    // read, and those another reconcile is already looking up share its read.
    const answers = await this.groups.getMany(
      unique.map((id) => prefix + id),
      (stale) => this.lookUp(targetType, stale.map((key) => key.slice(prefix.length)).sort(), vpcId),
    );
    const groups = new Map<string, string>();
    const unresolved: Unresolved[] = [];
    for (const id of unique) {
      const entry = answers.get(prefix + id)!;
      if (entry.groupId) groups.set(id, entry.groupId);
      else unresolved.push({ target: id, reason: entry.reason ?? "no security group" });
    }
    return { groups, unresolved };
  }

  /** Each target's answer, by its key in the kept reads (<vpc>/<target>). */
  private async lookUp(
    targetType: "instance" | "ip",
    ids: string[],
    vpcId: string,
  ): Promise<Map<string, BackendGroupAnswer>> {
    const interfaces =
      targetType === "instance" ? await this.instances(ids) : await this.podInterfaces(ids, vpcId);
    const tagged = await this.clusterTagged([...interfaces.values()].filter((i) => i.groups.length > 1));
    return new Map(ids.map((id) => [`${vpcId}/${id}`, this.choose(id, interfaces.get(id), tagged)]));
  }

  /** The VPC's IPv4 and IPv6 CIDRs (kept like the rest): where an internal NLB's clients are. */
  vpcCidrs(vpcId: string): Promise<VpcCidrs> {
    return this.vpcs.get(vpcId, async () => {
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
      return cidrs;
    });
  }

  private choose(id: string, found: Interface | undefined, tagged: Set<string>): BackendGroupAnswer {
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
