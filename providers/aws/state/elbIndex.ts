// Every load balancer and target group of the account, as DescribeLoadBalancers and DescribeTargetGroups list them
// (400 a page), and which of them are each Service's (GetResources on the cluster's tag, a page per 100), read at
// most once a minute instead of once per Service. It serves two ways:
// - it confirms that a Service's earlier full observation still holds — its load balancer and target groups exist,
//   unchanged in what the listings report (state, subnets, security groups, health check...) — so that a
//   no-change reconcile reads only its targets' health; what the listings do not show (listeners, attributes) is
//   read again by the next full observation, which comes at least every full-observation period;
// - a full observation takes the Service's load balancers and target groups from it instead of reading them alone.
// A Service Portico changed since the listings were read is read alone until they are read again. Listings gone
// stale are read again only when the Services that asked in the last minute would pay more without them: a Service
// arriving alone, a minute after the last, is read alone (a few calls) rather than the whole account (a call per
// 400 load balancers, per 400 target groups and per 100 tagged resources). The same holds for the cluster's tags,
// which only a full observation needs: within fresh listings, a Service reads its own tags (one call) until enough
// Services have asked within the minute to pay for the cluster's pages (a restart's pass does; a new Service
// among a thousand does not: it once read 21 pages of tags to learn that it had nothing).
import {
  type LoadBalancer,
  type TargetGroup,
  paginateDescribeLoadBalancers,
  paginateDescribeTargetGroups,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import type { ServiceRef } from "../../provider.ts";
import { eachPage, type AwsClients } from "../clients.ts";
import type { Observed } from "../model.ts";
import { TAG } from "../names.ts";
import {
  describeLoadBalancers,
  describeTargetGroups,
  loadBalancerFields,
  taggedResources,
  targetGroupFields,
  type Listed,
} from "./observe.ts";

const PAGE_SIZE = 400;
/** About what a Service read alone costs instead (GetResources on its UID, its load balancer, its target group). */
export const READ_ALONE_CALLS = 3;
/** About what a full observation costs more than the target-health read a confirmed observation needs. */
export const UNCONFIRMED_CALLS = 5;
/** How far back the Services that asked are counted: the longest the listings are trusted. */
const DEMAND_WINDOW_MS = 60_000;

interface Snapshot {
  at: number;
  /** The count of Portico's changes when the reads began: a Service changed later is read alone. */
  changesBefore: number;
  loadBalancers: Map<string, LoadBalancer>;
  targetGroups: Map<string, TargetGroup>;
}

export class ElbIndex {
  private readonly clients: AwsClients;
  private readonly cluster: string;
  private readonly ttlMs: number;
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  /**
   * Whose each listed resource is, read once per listing and after it: a Service changed since the listing began
   * is read alone anyway, and one changed before shows in both. (Tags of an earlier listing would miss what was
   * made since, for Services the newer listing no longer counts as changed.)
   */
  private readonly tags = new WeakMap<Snapshot, Promise<Map<string, string[]>>>();
  private readonly attached = new WeakMap<Snapshot, Map<string, string[]>>();
  private readonly changed = new Map<string, number>();
  private changes = 0;
  /** What the Services that asked within the last minute would pay without the listings (when, and how much). */
  private readonly asked: { at: number; calls: number }[] = [];
  /** When full observations asked for their Service's tags within the last minute (one call each, alone). */
  private readonly askedTags: number[] = [];
  /** The pages the cluster's tags took when last read (0: never read). */
  private tagPages = 0;
  /** The calls the last listings took (0: never read), which every Service asking shares. */
  private lastCost = 0;

  /** `ttlMs`: how old a listing may be (no older than an observation trusted as it is; at most a minute). */
  constructor(clients: AwsClients, cluster: string, ttlMs: number) {
    this.clients = clients;
    this.cluster = cluster;
    this.ttlMs = Math.min(ttlMs, 60_000);
  }

  /** The listings are not trusted any more (a new leadership term): the next look reads them, or itself, again. */
  forget(): void {
    this.snapshot = undefined;
  }

  /** Portico is about to change, or has just changed, the Service's load balancer (called before and after). */
  touched(serviceUid: string): void {
    this.changed.set(serviceUid, ++this.changes);
  }

  /**
   * Whether the listings show the observed load balancers and target groups as they were: when they were read
   * if so, else undefined. Taken before the observation, or missing anything (made since), the answer is no:
   * only a full observation can say.
   */
  async confirms(observed: Observed, takenAt: number): Promise<number | undefined> {
    const s = await this.usable(UNCONFIRMED_CALLS);
    if (!s || s.at < takenAt) return undefined;
    const same = (listed: object | undefined, fields: object) =>
      listed !== undefined && digest(listed) === digest(fields);
    const shown =
      observed.loadBalancers.every((lb) => {
        const { attributes: _a, listeners: _l, ...fields } = lb;
        const listed = s.loadBalancers.get(lb.arn);
        // One seen (or made) provisioning and active now is as it was: that is what provisioning comes to.
        const grown = fields.state === "provisioning" && listed?.State?.Code === "active";
        return same(listed && loadBalancerFields(listed), grown ? { ...fields, state: "active" } : fields);
      }) &&
      observed.targetGroups.every((tg) => {
        const { attributes: _a, targets: _t, health: _h, ...fields } = tg;
        const listed = s.targetGroups.get(tg.arn);
        return same(listed && targetGroupFields(listed), fields);
      });
    return shown ? s.at : undefined;
  }

  /** The Service's load balancers and target groups from the listings, or undefined when it must be read alone. */
  async listed(service: ServiceRef): Promise<Listed | undefined> {
    // Observing every time (a TTL of 0) means reading alone every time.
    if (this.ttlMs <= 0) return undefined;
    const s = await this.usable(READ_ALONE_CALLS);
    if (!s) return undefined;
    const lastChange = this.changed.get(service.uid);
    if (lastChange !== undefined && lastChange > s.changesBefore) return undefined;
    const arns = this.clusterTagsWorthIt(s)
      ? ((await this.tagged(s)).get(service.uid) ?? [])
      : await this.ownTags(service);
    // Made since the listing (by another hand: Portico's own changes are read alone above): described alone.
    const missingLbs = arns.filter((a) => a.includes(":loadbalancer/") && !s.loadBalancers.has(a));
    const missingTgs = arns.filter((a) => a.includes(":targetgroup/") && !s.targetGroups.has(a));
    const [lbs, tgs] = await Promise.all([
      missingLbs.length ? describeLoadBalancers(this.clients, missingLbs) : [],
      missingTgs.length ? describeTargetGroups(this.clients, missingTgs) : [],
    ]);
    return {
      loadBalancers: [...arns.flatMap((a) => s.loadBalancers.get(a) ?? []), ...lbs],
      targetGroups: [...arns.flatMap((a) => s.targetGroups.get(a) ?? []), ...tgs],
    };
  }

  /**
   * Whether the cluster's tags are (being) read for these listings, or are worth reading now: the full
   * observations that asked within the last minute would otherwise pay a call each, and the pages cost what they
   * last did (or, never read, one per hundred of the account's listed resources: at most that).
   */
  private clusterTagsWorthIt(s: Snapshot): boolean {
    if (this.tags.has(s)) return true;
    const now = Date.now();
    this.askedTags.push(now);
    while (this.askedTags.length && this.askedTags[0]! <= now - DEMAND_WINDOW_MS) this.askedTags.shift();
    return worthTagPages(this.askedTags.length, this.tagPages, s.loadBalancers.size + s.targetGroups.size);
  }

  /** One Service's load balancers and target groups by its tags (one call). */
  private async ownTags(service: ServiceRef): Promise<string[]> {
    const resources = await taggedResources(this.clients, [
      { Key: TAG.cluster, Values: [this.cluster] },
      { Key: TAG.serviceUid, Values: [service.uid] },
    ]);
    return resources.map((r) => r.ResourceARN!);
  }

  /**
   * Which target groups the listings show attached to each load balancer: a listener added outside Portico
   * forwards to one its known listeners do not use.
   */
  async attachedGroups(): Promise<((loadBalancerArn: string) => string[]) | undefined> {
    const s = await this.usable(0);
    if (!s) return undefined;
    let byLb = this.attached.get(s);
    if (!byLb) {
      byLb = new Map();
      for (const tg of s.targetGroups.values())
        for (const lb of tg.LoadBalancerArns ?? [])
          byLb.set(lb, [...(byLb.get(lb) ?? []), tg.TargetGroupArn!]);
      this.attached.set(s, byLb);
    }
    const found = byLb;
    return (arn) => found.get(arn) ?? [];
  }

  /**
   * The listings when they are current, or when reading them again costs less than what the Services that asked
   * within the last minute would pay without them (`alone`: what this one would); otherwise undefined. So Services
   * trickling in one at a time are read alone, and a resync or a burst shares one listing.
   */
  private usable(alone: number): Promise<Snapshot | undefined> {
    const now = Date.now();
    this.asked.push({ at: now, calls: alone });
    while (this.asked.length && this.asked[0]!.at <= now - DEMAND_WINDOW_MS) this.asked.shift();
    const fresh = this.snapshot !== undefined && now - this.snapshot.at < this.ttlMs;
    const wouldPay = this.asked.reduce((n, a) => n + a.calls, 0);
    if (fresh || this.loading || worthListing(wouldPay, this.lastCost + this.unreadTagPages()))
      return this.current();
    return Promise.resolve(undefined);
  }

  /**
   * The cluster's tag pages the last listings' cost leaves out, not having read them: full observations need them
   * (or a call each), so reading the listings again for them costs those too.
   */
  private unreadTagPages(): number {
    const s = this.snapshot;
    if (!s || this.tags.has(s)) return 0;
    return this.tagPages || Math.max(1, Math.ceil((s.loadBalancers.size + s.targetGroups.size) / 100));
  }

  private async current(): Promise<Snapshot> {
    if (this.snapshot && Date.now() - this.snapshot.at < this.ttlMs) return this.snapshot;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Which listed resources are whose, read after the listing it goes with. */
  private tagged(s: Snapshot): Promise<Map<string, string[]>> {
    let loading = this.tags.get(s);
    if (!loading) {
      loading = taggedResources(this.clients, [{ Key: TAG.cluster, Values: [this.cluster] }]).then(
        (resources) => {
          // A page holds up to 100: what the tags added to the listings' cost.
          this.tagPages = Math.max(1, Math.ceil(resources.length / 100));
          if (this.snapshot === s) this.lastCost += this.tagPages;
          const byService = new Map<string, string[]>();
          for (const r of resources) {
            const uid = r.Tags?.find((t) => t.Key === TAG.serviceUid)?.Value;
            if (uid) byService.set(uid, [...(byService.get(uid) ?? []), r.ResourceARN!]);
          }
          return byService;
        },
      );
      // A failed read is not kept: the next observation reads again.
      loading.catch(() => this.tags.delete(s));
      this.tags.set(s, loading);
    }
    return loading;
  }

  private async load(): Promise<Snapshot> {
    const at = Date.now();
    const changesBefore = this.changes;
    const loadBalancers = new Map<string, LoadBalancer>();
    const targetGroups = new Map<string, TargetGroup>();
    const client = { client: this.clients.elbv2, pageSize: PAGE_SIZE };
    const pages =
      (await eachPage("elbv2:DescribeLoadBalancers", paginateDescribeLoadBalancers(client, {}), (page) => {
        for (const lb of page.LoadBalancers ?? []) loadBalancers.set(lb.LoadBalancerArn!, lb);
      })) +
      (await eachPage("elbv2:DescribeTargetGroups", paginateDescribeTargetGroups(client, {}), (page) => {
        for (const tg of page.TargetGroups ?? []) targetGroups.set(tg.TargetGroupArn!, tg);
      }));
    this.snapshot = { at, changesBefore, loadBalancers, targetGroups };
    this.lastCost = pages;
    for (const [uid, n] of this.changed) if (n <= changesBefore) this.changed.delete(uid);
    return this.snapshot;
  }
}

/** Fields compared as data; sets (groups, subnets, load balancers) in a fixed order. */
function digest(fields: object): string {
  return JSON.stringify(fields, (_key, value: unknown) =>
    Array.isArray(value) && value.every((v) => typeof v === "string") ? [...value].sort() : value,
  );
}

/**
 * Whether reading the listings again is worth it: they cost `listingCalls` (unknown before the first read, which
 * is always made), and the Services that asked within the TTL would pay `wouldPay` without them.
 */
export function worthListing(wouldPay: number, listingCalls: number): boolean {
  return listingCalls === 0 || wouldPay >= listingCalls;
}

/**
 * Whether `asks` full observations within a minute (a call each for their own tags) pay for the cluster's tag
 * pages: as many as they took when last read, or, never read, one per hundred of the account's `listed` load
 * balancers and target groups (the cluster holds at most those).
 */
export function worthTagPages(asks: number, lastPages: number, listed: number): boolean {
  return asks >= (lastPages || Math.max(1, Math.ceil(listed / 100)));
}
