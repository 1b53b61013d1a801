// The cluster's shared backend security group (one per VPC, on every NLB whose backend rules Portico manages) and
// the range rules that admit it on the backend groups (backendRanges.ts says why they are shared). What every
// Service needs is kept here as Services are reconciled; the rules are read from EC2 at most once a minute (by
// background passes; ../state/cacheAge.ts) and otherwise known from Portico's own writes, so a Service whose needs are already met costs no call at all.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  DeleteSecurityGroupCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
  type SecurityGroupRule,
} from "@aws-sdk/client-ec2";
import { createHash } from "node:crypto";
import { CloudError } from "../../errors.ts";
import {
  covers,
  describeRange,
  planRanges,
  wantedRanges,
  type BackendNeed,
  type ObservedRange,
  type PortRange,
} from "./backendRanges.ts";
import { securityGroupRulesWhere } from "./backendGroups.ts";
import { call, type AwsClients } from "../clients.ts";
import { TAG } from "../names.ts";
import { clusterCacheMs } from "../state/cacheAge.ts";
import { tagOf, type ClusterGroups, type ClusterGroupsRead } from "../state/clusterGroups.ts";

export const SHARED_GROUP_RESOURCE = "shared-backend-group";
export const RANGE_RULE_RESOURCE = "backend-range";

/** What one Service asks of the shared group: where it is, and the ports its targets need. */
export interface SharedUse {
  vpcId: string;
  needs: BackendNeed[];
}

export class SharedBackend {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  /** Per Service UID: its use of the shared group, or null when it has none. */
  private readonly uses = new Map<string, SharedUse | null>();
  /** The Services in the controller's view, once told: until each has been reconciled, nothing narrows. */
  private live: Set<string> | undefined;
  private readonly groups = new Map<string, string>();
  private rules: { at: number; list: ObservedRange[] } | undefined;
  /** The cluster's groups and rules, read with the groups' index (../state/clusterGroups.ts). */
  private readonly reads: ClusterGroups;
  /**
   * The marks of Portico's last changes here, to its groups and to its rules: a read used for either must begin
   * after it (a group just made holds no rule, so making one does not send the rules to be read again).
   */
  private afterGroups = 0;
  private afterRules = 0;
  /** One change at a time: every Service's reconcile reads and writes the same few rules. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(clients: AwsClients, cluster: string, reads: ClusterGroups) {
    this.clients = clients;
    this.cluster = cluster;
    this.reads = reads;
  }

  /** Records the Service's use (null: none) and makes the rules hold it; returns the changes made. */
  use(uid: string, use: SharedUse | null): Promise<{ groupId?: string; changes: string[] }> {
    return this.serially(async () => {
      const before = this.uses.get(uid);
      this.uses.set(uid, use);
      const changes: string[] = [];
      const groupId = use ? await this.group(use.vpcId, true) : undefined;
      for (const vpcId of new Set([before?.vpcId, use?.vpcId]))
        if (vpcId) changes.push(...(await this.reconcile(vpcId, false)));
      return { ...(groupId ? { groupId } : {}), changes };
    });
  }

  /** What `use` would change, without changing it (the shared group may not exist yet). */
  preview(uid: string, use: SharedUse | null): Promise<string[]> {
    return this.serially(async () => {
      const vpcs = new Set([this.uses.get(uid)?.vpcId, use?.vpcId]);
      const out: string[] = [];
      for (const vpcId of vpcs) {
        if (!vpcId) continue;
        const groupId = await this.group(vpcId, false);
        const needs = [...this.uses].filter(([u]) => u !== uid).map(([, v]) => v);
        const p = await this.planFor(vpcId, groupId, [...needs, vpcId === use?.vpcId ? use : null]);
        if (!groupId && use?.vpcId === vpcId) out.push(`create the cluster's shared backend security group`);
        out.push(...p.authorize.map((r) => `admit the shared group: ${describeRange(r)}`));
        out.push(...p.revoke.map((r) => `revoke shared rule ${describeRange(r)}`));
      }
      return out;
    });
  }

  /**
   * A new leadership term: what was known of the groups and rules, and of every Service's needs, may be stale,
   * so nothing narrows again until every Service in view has been reconciled in this term (as after a restart).
   */
  forget(): Promise<void> {
    return this.serially(() => {
      this.uses.clear();
      this.live = undefined;
      this.groups.clear();
      this.rules = undefined;
      this.afterGroups = this.afterRules = this.reads.mark();
      return Promise.resolve();
    });
  }

  /** The VPC's shared group, if it exists (made by `use`). */
  groupOf(vpcId: string): Promise<string | undefined> {
    return this.serially(() => this.group(vpcId, false));
  }

  /** The Service is gone: its ports are no longer held open (once every other Service's are known). */
  release(uid: string): Promise<string[]> {
    return this.serially(async () => {
      const before = this.uses.get(uid);
      this.uses.delete(uid);
      this.live?.delete(uid);
      return before ? await this.reconcile(before.vpcId, false) : [];
    });
  }

  /**
   * Told which Services are in view (and, if known, which own anything in the cloud): rules are narrowed to what
   * they need once each has been reconciled, and a shared group no Service uses any more is deleted with its
   * rules (left for the next time while a load balancer being deleted still holds it).
   */
  settle(live: string[], owning?: ReadonlySet<string>): Promise<string[]> {
    return this.serially(async () => {
      // Uses of Services not in the list are kept: one made since the list was taken may rely on them, and a
      // deleted Service's use goes with its deletion (release).
      this.live = new Set(live);
      // A Service not reconciled yet that owns nothing in the cloud (refused for bad input before anything was
      // made, say) has no load balancer relying on any rule: it holds nothing back.
      if (owning)
        for (const uid of live) if (!this.uses.has(uid) && !owning.has(uid)) this.uses.set(uid, null);
      this.rules = undefined;
      if (!this.complete()) return [];
      const changes: string[] = [];
      for (const [vpcId, groupId] of await this.existingGroups()) {
        changes.push(...(await this.reconcile(vpcId, true)));
        if (![...this.uses.values()].some((u) => u?.vpcId === vpcId))
          changes.push(...(await this.deleteGroup(vpcId, groupId)));
      }
      return changes;
    });
  }

  /**
   * The security-rule check's read of the cluster's rules: a port some Service needs that no shared rule admits any
   * more (revoked or narrowed by hand) is admitted again at once, as `use` would admit it. Returns, per Service
   * that needed it, what it lost. A read begun before Portico's own last change of the groups or rules judges
   * nothing (it may not show that change).
   */
  repair(read: ClusterGroupsRead): Promise<Map<string, string[]>> {
    return this.serially(async () => {
      const lost = new Map<string, string[]>();
      if (read.seq <= this.afterRules || read.seq <= this.afterGroups) return lost;
      const list = rangesFrom(read.rules);
      const shared = new Map<string, string>();
      for (const g of read.groups)
        if (tagOf(g, TAG.resource) === SHARED_GROUP_RESOURCE) shared.set(g.VpcId!, g.GroupId!);
      const vpcs = new Set<string>();
      for (const [uid, use] of this.uses) {
        const groupId = use && shared.get(use.vpcId);
        if (!groupId) continue;
        const admitting = list.filter((r) => r.source === groupId);
        const gone = use.needs.filter((n) => !covers(admitting, [n]));
        if (!gone.length) continue;
        vpcs.add(use.vpcId);
        lost.set(
          uid,
          gone.map(
            (n) =>
              `${n.groupId} no longer admits the NLBs' shared group ${groupId} on ${n.protocol}/${n.port}`,
          ),
        );
      }
      if (!vpcs.size) return lost;
      // Newer than Portico's last change of the rules, the read stands for them unless a later one was taken.
      if (!this.rules || this.rules.at <= read.at) this.rules = { at: read.at, list };
      for (const vpcId of vpcs) await this.reconcile(vpcId, false);
      return lost;
    });
  }

  private complete(): boolean {
    return this.live !== undefined && [...this.live].every((uid) => this.uses.has(uid));
  }

  private async reconcile(vpcId: string, fresh: boolean): Promise<string[]> {
    const groupId = await this.group(vpcId, false);
    if (!groupId) return [];
    if (fresh) this.rules = undefined;
    const p = await this.planFor(vpcId, groupId, [...this.uses.values()]);
    const changes: string[] = [];
    for (const r of p.authorize) {
      await this.authorize(groupId, r);
      changes.push(`admit the shared backend group: ${describeRange(r)}`);
    }
    for (const r of p.revoke) {
      await this.revoke(r);
      changes.push(`revoke shared backend rule ${describeRange(r)}`);
    }
    return changes;
  }

  private async planFor(vpcId: string, groupId: string | undefined, uses: (SharedUse | null | undefined)[]) {
    const wanted = wantedRanges(uses.filter((u) => u?.vpcId === vpcId).map((u) => u!.needs));
    const observed = groupId ? (await this.observed()).filter((r) => r.source === groupId) : [];
    return planRanges(wanted, observed, this.complete());
  }

  /** The shared group of the VPC: looked up once, made when asked to and missing. */
  private async group(vpcId: string, create: boolean): Promise<string | undefined> {
    const known = this.groups.get(vpcId);
    if (known) return known;
    const found = (await this.existingGroups()).get(vpcId);
    if (found || !create) return found;
    const name = `portico-backend-${this.cluster.slice(0, 200)}-${digest(this.cluster, vpcId)}`;
    try {
      const out = await call("ec2:CreateSecurityGroup", () =>
        this.clients.ec2.send(
          new CreateSecurityGroupCommand({
            GroupName: name,
            Description: `Portico: shared by the NLBs of cluster ${this.cluster}; their targets admit it`,
            VpcId: vpcId,
            TagSpecifications: [{ ResourceType: "security-group", Tags: this.tags(SHARED_GROUP_RESOURCE) }],
          }),
        ),
      );
      this.groups.set(vpcId, out.GroupId!);
      this.afterGroups = this.reads.mark();
      return out.GroupId!;
    } catch (err) {
      // Made by an earlier run whose tags did not land: the name is this cluster's in this VPC alone.
      if (!(err instanceof CloudError && err.code === "InvalidGroup.Duplicate")) throw err;
      const out = await call("ec2:DescribeSecurityGroups", () =>
        this.clients.ec2.send(
          new DescribeSecurityGroupsCommand({
            Filters: [
              { Name: "group-name", Values: [name] },
              { Name: "vpc-id", Values: [vpcId] },
            ],
          }),
        ),
      );
      const id = out.SecurityGroups?.[0]?.GroupId;
      if (!id) throw err;
      this.groups.set(vpcId, id);
      return id;
    }
  }

  private async existingGroups(): Promise<Map<string, string>> {
    const read = await this.reads.read(clusterCacheMs(), this.afterGroups);
    const found = new Map<string, string>();
    for (const g of read.groups)
      if (tagOf(g, TAG.resource) === SHARED_GROUP_RESOURCE) found.set(g.VpcId!, g.GroupId!);
    for (const [vpcId, id] of found) this.groups.set(vpcId, id);
    return found;
  }

  private async observed(): Promise<ObservedRange[]> {
    if (this.rules && Date.now() - this.rules.at < clusterCacheMs()) return this.rules.list;
    const read = await this.reads.read(clusterCacheMs(), this.afterRules);
    const list = rangesFrom(read.rules);
    this.rules = { at: read.at, list };
    return list;
  }

  private async authorize(groupId: string, r: PortRange): Promise<void> {
    try {
      const out = await call("ec2:AuthorizeSecurityGroupIngress", () =>
        this.clients.ec2.send(
          new AuthorizeSecurityGroupIngressCommand({
            GroupId: r.groupId,
            IpPermissions: [
              {
                IpProtocol: r.protocol,
                FromPort: r.from,
                ToPort: r.to,
                UserIdGroupPairs: [
                  { GroupId: groupId, Description: `portico: NLBs of cluster ${this.cluster}`.slice(0, 255) },
                ],
              },
            ],
            TagSpecifications: [
              { ResourceType: "security-group-rule", Tags: this.tags(RANGE_RULE_RESOURCE) },
            ],
          }),
        ),
      );
      const made = out.SecurityGroupRules?.[0]?.SecurityGroupRuleId;
      this.afterRules = this.reads.mark();
      if (made && this.rules) this.rules.list = [...this.rules.list, { ...r, ruleId: made, source: groupId }];
      else this.rules = undefined;
    } catch (err) {
      // The same rule exists (ours, made by a run that did not see it through): read again next time.
      this.rules = undefined;
      this.afterRules = this.reads.mark();
      if (!(err instanceof CloudError && err.code === "InvalidPermission.Duplicate")) throw err;
    }
  }

  private async revoke(r: ObservedRange): Promise<void> {
    try {
      await call("ec2:RevokeSecurityGroupIngress", () =>
        this.clients.ec2.send(
          new RevokeSecurityGroupIngressCommand({ GroupId: r.groupId, SecurityGroupRuleIds: [r.ruleId] }),
        ),
      );
    } catch (err) {
      // Revoked by hand, or its group deleted: nothing left to revoke.
      if (!(err instanceof CloudError && /NotFound$/.test(err.code))) throw err;
    }
    this.afterRules = this.reads.mark();
    if (this.rules) this.rules.list = this.rules.list.filter((o) => o.ruleId !== r.ruleId);
  }

  private async deleteGroup(vpcId: string, groupId: string): Promise<string[]> {
    try {
      await call("ec2:DeleteSecurityGroup", () =>
        this.clients.ec2.send(new DeleteSecurityGroupCommand({ GroupId: groupId })),
      );
    } catch (err) {
      // Still on a load balancer being deleted, or gone already: the next settle tries again.
      if (err instanceof CloudError && (err.code === "DependencyViolation" || /NotFound$/.test(err.code)))
        return [];
      throw err;
    }
    this.groups.delete(vpcId);
    this.afterGroups = this.reads.mark();
    return [`delete the shared backend security group ${groupId}: no load balancer uses it`];
  }

  private tags(resource: string) {
    return [
      { Key: TAG.cluster, Value: this.cluster },
      { Key: TAG.resource, Value: resource },
    ];
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** Portico's shared range rules in this cluster, whichever backend group holds them (one call a page). */
export async function observeRanges(clients: AwsClients, cluster: string): Promise<ObservedRange[]> {
  const rules = await securityGroupRulesWhere(clients, [
    { Name: `tag:${TAG.cluster}`, Values: [cluster] },
    { Name: `tag:${TAG.resource}`, Values: [RANGE_RULE_RESOURCE] },
  ]);
  return rangesFrom(rules);
}

/** Portico's shared range rules among `rules`. */
export function rangesFrom(rules: SecurityGroupRule[]): ObservedRange[] {
  return rules
    .filter((r) => tagOf(r, TAG.resource) === RANGE_RULE_RESOURCE)
    .filter((r) => !r.IsEgress && (r.IpProtocol === "tcp" || r.IpProtocol === "udp"))
    .map((r) => ({
      ruleId: r.SecurityGroupRuleId!,
      groupId: r.GroupId!,
      protocol: r.IpProtocol as "tcp" | "udp",
      from: r.FromPort!,
      to: r.ToPort!,
      source: r.ReferencedGroupInfo?.GroupId ?? "",
    }));
}

function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 10);
}
