// The cluster's shared backend security group (one per VPC, on every NLB whose backend rules Portico manages) and
// the range rules that admit it on the backend groups (backendRanges.ts says why they are shared). What every
// Service needs is kept here as Services are planned; the rules are read from EC2 at most once a minute (by
// background passes; ../state/cacheAge.ts) and otherwise known from Portico's own writes (sharedWrites.ts), so a
// Service whose needs are already met costs no call at all. A Service's pass plans its part (`plan`: what would
// change, with nothing written) and its plan's apply carries it out (`apply`), one change at a time for the cluster.
import type { SecurityGroupRule } from "@aws-sdk/client-ec2";
import { createHash } from "node:crypto";
import {
  covers,
  describeRange,
  planRanges,
  wantedRanges,
  type BackendNeed,
  type ObservedRange,
} from "./backendRanges.ts";
import { securityGroupRulesWhere } from "./backendGroups.ts";
import {
  admitShared,
  createSharedGroup,
  deleteSharedGroup,
  RANGE_RULE_RESOURCE,
  revokeShared,
  SHARED_GROUP_RESOURCE,
} from "./sharedWrites.ts";
import type { AwsClients } from "../clients.ts";
import { TAG } from "../names.ts";
import { clusterCacheMs } from "../state/cacheAge.ts";
import { tagOf, type ClusterGroups, type ClusterGroupsRead } from "../state/clusterGroups.ts";

export { RANGE_RULE_RESOURCE, SHARED_GROUP_RESOURCE } from "./sharedWrites.ts";

/** What one Service asks of the shared group: where it is, and the ports its targets need. */
export interface SharedUse {
  vpcId: string;
  needs: BackendNeed[];
}

/** A Service's part in the shared backend: the group its NLB joins, and what its plan changes for it. */
export interface SharedPart {
  /** The shared group of the Service's VPC, when it exists (absent: its plan makes it). */
  groupId?: string;
  /** The VPCs whose rules the Service's plan changes (empty: nothing to change). */
  vpcIds: string[];
  /** Those changes, in words. */
  changes: string[];
}

export class SharedBackend {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  /** Per Service UID: its use of the shared group, or null when it has none. */
  private readonly uses = new Map<string, SharedUse | null>();
  /** The Services in the controller's view, once told: until each has been planned, nothing narrows. */
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

  /**
   * What the rules need for the Service's use (null: none) beside every other Service's: nothing is written or
   * recorded (the Service's plan records it and carries it out through `apply`, or `porticoctl plan` shows it).
   */
  plan(uid: string, use: SharedUse | null): Promise<SharedPart> {
    return this.serially(async () => {
      const before = this.uses.get(uid);
      const uses = new Map(this.uses).set(uid, use);
      const changes: string[] = [];
      const vpcIds: string[] = [];
      let groupId: string | undefined;
      for (const vpcId of new Set([before?.vpcId, use?.vpcId])) {
        if (!vpcId) continue;
        const group = await this.group(vpcId);
        if (vpcId === use?.vpcId) groupId = group;
        const p = await this.planFor(vpcId, group, uses);
        const lines = [
          ...(!group && vpcId === use?.vpcId ? [`create the cluster's shared backend security group`] : []),
          ...p.authorize.map((r) => `admit the shared backend group: ${describeRange(r)}`),
          ...p.revoke.map((r) => `revoke shared backend rule ${describeRange(r)}`),
        ];
        if (lines.length) vpcIds.push(vpcId);
        changes.push(...lines);
      }
      return { ...(groupId ? { groupId } : {}), vpcIds, changes };
    });
  }

  /** The Service's use, as its plan is carried out (null: none); `apply` then makes the rules hold it. */
  record(uid: string, use: SharedUse | null): void {
    this.uses.set(uid, use);
  }

  /**
   * Makes the rules of these VPCs hold every Service's use as now recorded (the shared group made where a Service
   * needs it); returns the VPCs' shared groups.
   */
  apply(vpcIds: string[]): Promise<Map<string, string>> {
    return this.serially(async () => {
      const groups = new Map<string, string>();
      for (const vpcId of vpcIds) {
        const needed = [...this.uses.values()].some((u) => u?.vpcId === vpcId);
        const groupId = needed ? await this.ensureGroup(vpcId) : await this.group(vpcId);
        if (groupId) groups.set(vpcId, groupId);
        await this.reconcile(vpcId, false);
      }
      return groups;
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
   * more (revoked or narrowed by hand) is admitted again at once, as `apply` would admit it. Returns, per Service
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

  private complete(uses: ReadonlyMap<string, SharedUse | null> = this.uses): boolean {
    return this.live !== undefined && [...this.live].every((uid) => uses.has(uid));
  }

  private async reconcile(vpcId: string, fresh: boolean): Promise<string[]> {
    const groupId = await this.group(vpcId);
    if (!groupId) return [];
    if (fresh) this.rules = undefined;
    const p = await this.planFor(vpcId, groupId, this.uses);
    const changes: string[] = [];
    for (const r of p.authorize) {
      await this.admit(groupId, r);
      changes.push(`admit the shared backend group: ${describeRange(r)}`);
    }
    for (const r of p.revoke) {
      await revokeShared(this.clients, r);
      this.afterRules = this.reads.mark();
      if (this.rules) this.rules.list = this.rules.list.filter((o) => o.ruleId !== r.ruleId);
      changes.push(`revoke shared backend rule ${describeRange(r)}`);
    }
    return changes;
  }

  /** The rules the VPC's uses need, against those observed (none while the group is still to be made). */
  private async planFor(
    vpcId: string,
    groupId: string | undefined,
    uses: ReadonlyMap<string, SharedUse | null>,
  ) {
    const wanted = wantedRanges([...uses.values()].filter((u) => u?.vpcId === vpcId).map((u) => u!.needs));
    const observed = groupId ? (await this.observed()).filter((r) => r.source === groupId) : [];
    return planRanges(wanted, observed, this.complete(uses));
  }

  /** The shared group of the VPC, if it exists: looked up once. */
  private async group(vpcId: string): Promise<string | undefined> {
    return this.groups.get(vpcId) ?? (await this.existingGroups()).get(vpcId);
  }

  private async ensureGroup(vpcId: string): Promise<string> {
    const found = await this.group(vpcId);
    if (found) return found;
    const name = `portico-backend-${this.cluster.slice(0, 200)}-${digest(this.cluster, vpcId)}`;
    const { groupId, made } = await createSharedGroup(this.clients, this.cluster, vpcId, name);
    this.groups.set(vpcId, groupId);
    if (made) this.afterGroups = this.reads.mark();
    return groupId;
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

  /** Admits the group on the range, keeping the copy of the rules current (or dropping it when unsure). */
  private async admit(groupId: string, r: Parameters<typeof admitShared>[3]): Promise<void> {
    let made: string | undefined;
    try {
      made = await admitShared(this.clients, this.cluster, groupId, r);
    } finally {
      this.afterRules = this.reads.mark();
      // Failed, or the same rule was there already (ours, made by a run that did not see it through): read again.
      if (!made) this.rules = undefined;
    }
    if (made && this.rules) this.rules.list = [...this.rules.list, { ...r, ruleId: made, source: groupId }];
  }

  private async deleteGroup(vpcId: string, groupId: string): Promise<string[]> {
    // Still on a load balancer being deleted, or gone already: the next settle tries again.
    if (!(await deleteSharedGroup(this.clients, groupId))) return [];
    this.groups.delete(vpcId);
    this.afterGroups = this.reads.mark();
    return [`delete the shared backend security group ${groupId}: no load balancer uses it`];
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
