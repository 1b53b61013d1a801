// What every resource's applier shares while a plan is carried out: the clients, whose the resources are, and the
// names the plan uses resolved to IDs as the cloud answers (a target group or security group made earlier in the same
// plan, the load balancer made or observed). Each resource folder (loadBalancer/, targetGroups/, listeners/,
// securityGroups/) gives one applier per operation kind it plans; apply.ts only runs them in the plan's order.
import { CloudError } from "../errors.ts";
import type { ServiceRef } from "../provider.ts";
import type { AwsClients } from "./clients.ts";
import { OWN_SECURITY_GROUP, SHARED_BACKEND_GROUP, type Observed } from "./model.ts";
import type { Written } from "./written.ts";

export interface AppliedLoadBalancer {
  arn: string;
  dnsName: string;
  state: string;
}

/** What apply needs to resolve names to ARNs: the observation the plan was made from. */
export interface ApplyContext {
  clients: AwsClients;
  observed: Observed;
  /** The Service's desired load balancer as observed, if it existed. */
  current?: AppliedLoadBalancer;
  securityGroupName: string;
  cluster: string;
  service: ServiceRef;
  /** Filled in with what was made, as the cloud answered (written.ts derives the observation after). */
  written?: Written;
  /** The cluster's shared backend group, for a plan that changes the Service's part in it. */
  shared?: SharedChanges;
}

/** What carries out a Service's part in the shared backend group (securityGroups/sharedBackend.ts). */
export interface SharedChanges {
  /** Brings these VPCs' shared rules to what every Service needs; returns their shared groups. */
  apply(vpcIds: string[]): Promise<Map<string, string>>;
}

/** The state one plan's appliers share: what is known of the Service's resources, updated by each write. */
export class ApplyState {
  readonly clients: AwsClients;
  readonly cluster: string;
  readonly service: ServiceRef;
  readonly written: Written | undefined;
  /** Target group ARNs by name: those observed, then those made. */
  readonly targetGroups: Map<string, string>;
  /** The Service's own security group, once observed or made. */
  securityGroupId: string | undefined;
  /** The Service's load balancer, once observed or made. */
  current: AppliedLoadBalancer | undefined;
  /** The cluster's shared backend group, once the plan made it (it stands as SHARED_BACKEND_GROUP until then). */
  sharedGroupId: string | undefined;
  private readonly sharedChanges: SharedChanges | undefined;

  constructor(ctx: ApplyContext) {
    this.clients = ctx.clients;
    this.cluster = ctx.cluster;
    this.service = ctx.service;
    this.written = ctx.written;
    this.targetGroups = new Map(ctx.observed.targetGroups.map((tg) => [tg.name, tg.arn]));
    this.securityGroupId = ctx.observed.securityGroups.find((g) => g.name === ctx.securityGroupName)?.id;
    this.current = ctx.current;
    this.sharedChanges = ctx.shared;
  }

  shared(): SharedChanges {
    if (!this.sharedChanges)
      throw new Error("plan changes the shared backend group, which apply was not given");
    return this.sharedChanges;
  }

  /** The groups an NLB is to carry, the stand-ins replaced by the IDs they now have (undefined: not made). */
  groupIds(groupIds: string[]): (string | undefined)[] {
    return groupIds.map((g) =>
      g === OWN_SECURITY_GROUP ? this.securityGroupId : g === SHARED_BACKEND_GROUP ? this.sharedGroupId : g,
    );
  }

  lbArn(): string {
    if (!this.current) throw new Error("plan acts on a load balancer that was neither observed nor created");
    return this.current.arn;
  }

  tgArn(name: string): string {
    const arn = this.targetGroups.get(name);
    if (!arn) throw new Error(`plan uses target group ${name} that was neither observed nor created`);
    return arn;
  }
}

type Kinded = { kind: string };

/** One applier per operation kind of a resource: the type checker finds a kind without one. */
export type Appliers<O extends Kinded> = {
  [K in O["kind"]]: (op: Extract<O, { kind: K }>, state: ApplyState) => Promise<void>;
};

/** Deleting what is already gone is success: deletion is idempotent. */
export async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CloudError && /NotFound$/.test(err.code)) return;
    throw err;
  }
}
