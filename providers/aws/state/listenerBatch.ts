// The periodic full observation of a settled Service re-reads what the account's listings cannot show: its
// listeners and attributes. Attributes have no bulk read, listeners do: DescribeListeners takes listener ARNs of
// any load balancers. So a Service whose listeners are known from its last full observation has them read by ARN,
// together with the other Services observed at the same moment (a resync looks at them all), instead of one call
// per load balancer. What this cannot see it leaves to the per-load-balancer read: a listener gone (its ARN is
// missing from the answer, or the whole call answers ListenerNotFound, as AWS does when any ARN is unknown), and a
// listener added outside Portico, which forwards to a target group the listings show attached to the load balancer
// but that none of the known listeners uses.
import { type Listener, paginateDescribeListeners } from "@aws-sdk/client-elastic-load-balancing-v2";
import { CloudError } from "../../errors.ts";
import { eachPage, type AwsClients } from "../clients.ts";
import type { Observed, ObservedLoadBalancer } from "../model.ts";

/** ARNs in one DescribeListeners: AWS states no maximum for ListenerArns, so DescribeLoadBalancers' 20 is kept. */
export const LISTENERS_PER_CALL = 20;
/** How long a request waits for others to share its call: a resync starts many observations at once. */
const WINDOW_MS = 20;

interface Request {
  loadBalancerArn: string;
  listenerArns: string[];
  resolve: (listeners: Listener[] | undefined) => void;
  reject: (err: unknown) => void;
}

export class ListenerBatch {
  private readonly clients: AwsClients;
  private readonly windowMs: number;
  private pending: Request[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(clients: AwsClients, windowMs = WINDOW_MS) {
    this.clients = clients;
    this.windowMs = windowMs;
  }

  /**
   * The load balancer's listeners read by their ARNs, or undefined when they are no longer exactly those (then only
   * the per-load-balancer read can say what there is).
   */
  read(loadBalancerArn: string, listenerArns: string[]): Promise<Listener[] | undefined> {
    if (listenerArns.length === 0 || listenerArns.length > LISTENERS_PER_CALL)
      return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.pending.push({ loadBalancerArn, listenerArns, resolve, reject });
      const queued = this.pending.reduce((n, r) => n + r.listenerArns.length, 0);
      if (queued >= LISTENERS_PER_CALL) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const requests = this.pending;
    this.pending = [];
    for (const chunk of chunks(requests)) void this.send(chunk);
  }

  private async send(requests: Request[]): Promise<void> {
    const arns = requests.flatMap((r) => r.listenerArns);
    let found: Map<string, Listener>;
    try {
      found = await this.describe(arns);
    } catch (err) {
      if (err instanceof CloudError && err.code === "ListenerNotFound") {
        for (const r of requests) r.resolve(undefined);
      } else for (const r of requests) r.reject(err);
      return;
    }
    for (const r of requests) {
      const listeners = r.listenerArns.map((arn) => found.get(arn));
      const whole = listeners.every((l) => l?.LoadBalancerArn === r.loadBalancerArn);
      r.resolve(whole ? (listeners as Listener[]) : undefined);
    }
  }

  private async describe(arns: string[]): Promise<Map<string, Listener>> {
    const found = new Map<string, Listener>();
    await eachPage(
      "elbv2:DescribeListeners",
      paginateDescribeListeners({ client: this.clients.elbv2 }, { ListenerArns: arns }),
      (page) => {
        for (const l of page.Listeners ?? []) found.set(l.ListenerArn!, l);
      },
    );
    return found;
  }
}

/** Requests grouped so that no call names more than LISTENERS_PER_CALL listeners. */
export function chunks<T extends { listenerArns: string[] }>(requests: T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const r of requests) {
    if (size + r.listenerArns.length > LISTENERS_PER_CALL && current.length) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(r);
    size += r.listenerArns.length;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * The known listeners of each load balancer of an earlier full observation, where they can stand for a read by
 * ARN: none where a target group the listings show attached to it is used by none of them (a listener was added).
 */
export function knownListeners(
  loadBalancers: ObservedLoadBalancer[],
  attachedGroups: (loadBalancerArn: string) => string[],
): Map<string, string[]> {
  const known = new Map<string, string[]>();
  for (const lb of loadBalancers) {
    const used = new Set(lb.listeners.flatMap((l) => (l.targetGroupArn ? [l.targetGroupArn] : [])));
    if (attachedGroups(lb.arn).every((tg) => used.has(tg)))
      known.set(
        lb.arn,
        lb.listeners.map((l) => l.arn),
      );
  }
  return known;
}

/** Where a full observation takes listeners from: by ARN where the last one's are known to be all there is. */
export function listenersFrom(
  batch: ListenerBatch,
  last: Observed,
  attachedGroups: (loadBalancerArn: string) => string[],
): (loadBalancerArn: string) => Promise<Listener[] | undefined> {
  const known = knownListeners(last.loadBalancers, attachedGroups);
  return (arn) => {
    const arns = known.get(arn);
    return arns ? batch.read(arn, arns) : Promise.resolve(undefined);
  };
}
