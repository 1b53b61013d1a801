// Every load balancer and target group of the account, as DescribeLoadBalancers and DescribeTargetGroups list them
// (400 a page), read at most once a minute. It confirms that a Service's earlier full observation still holds —
// the load balancer and target groups exist, unchanged in what those calls report (state, subnets, security
// groups, health check...) — so that a no-change reconcile reads only its targets' health instead of observing
// the whole load balancer again. What the listings do not show (listeners, attributes) is read again by the
// next full observation, which comes at least every `confirmedTtlMs` (RecentObservations).
import {
  DescribeLoadBalancersCommand,
  DescribeTargetGroupsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { call, type AwsClients } from "./clients.ts";
import type { Observed } from "./model.ts";
import { loadBalancerFields, targetGroupFields } from "./observe.ts";

const PAGE_SIZE = 400;

interface Snapshot {
  at: number;
  loadBalancers: Map<string, string>;
  targetGroups: Map<string, string>;
}

export class ElbIndex {
  private readonly clients: AwsClients;
  private readonly ttlMs: number;
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  /** `ttlMs`: how old a listing may be (no older than an observation trusted as it is; at most a minute). */
  constructor(clients: AwsClients, ttlMs: number) {
    this.clients = clients;
    this.ttlMs = Math.min(ttlMs, 60_000);
  }

  /**
   * Whether the listings show the observed load balancers and target groups as they were. Taken before the
   * observation, or missing anything (made since), the answer is no: only a full observation can say.
   */
  async confirms(observed: Observed, takenAt: number): Promise<boolean> {
    const s = await this.current();
    if (s.at < takenAt) return false;
    const sameLoadBalancers = observed.loadBalancers.every((lb) => {
      const { attributes: _a, listeners: _l, ...fields } = lb;
      return s.loadBalancers.get(lb.arn) === digest(fields);
    });
    return (
      sameLoadBalancers &&
      observed.targetGroups.every((tg) => {
        const { attributes: _a, targets: _t, health: _h, ...fields } = tg;
        return s.targetGroups.get(tg.arn) === digest(fields);
      })
    );
  }

  private async current(): Promise<Snapshot> {
    if (this.snapshot && Date.now() - this.snapshot.at < this.ttlMs) return this.snapshot;
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<Snapshot> {
    const at = Date.now();
    const loadBalancers = new Map<string, string>();
    const targetGroups = new Map<string, string>();
    let marker: string | undefined;
    do {
      const page = await call("elbv2:DescribeLoadBalancers", () =>
        this.clients.elbv2.send(
          new DescribeLoadBalancersCommand({ PageSize: PAGE_SIZE, ...(marker ? { Marker: marker } : {}) }),
        ),
      );
      for (const lb of page.LoadBalancers ?? [])
        loadBalancers.set(lb.LoadBalancerArn!, digest(loadBalancerFields(lb)));
      marker = page.NextMarker || undefined;
    } while (marker);
    do {
      const page = await call("elbv2:DescribeTargetGroups", () =>
        this.clients.elbv2.send(
          new DescribeTargetGroupsCommand({ PageSize: PAGE_SIZE, ...(marker ? { Marker: marker } : {}) }),
        ),
      );
      for (const tg of page.TargetGroups ?? [])
        targetGroups.set(tg.TargetGroupArn!, digest(targetGroupFields(tg)));
      marker = page.NextMarker || undefined;
    } while (marker);
    this.snapshot = { at, loadBalancers, targetGroups };
    return this.snapshot;
  }
}

/** Fields compared as data; sets (groups, subnets, load balancers) in a fixed order. */
function digest(fields: object): string {
  return JSON.stringify(fields, (_key, value: unknown) =>
    Array.isArray(value) && value.every((v) => typeof v === "string") ? [...value].sort() : value,
  );
}
