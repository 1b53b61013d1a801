// The AWS Load Balancer Controller's (LBC) resources for a Service, read by LBC's own tags, and their take-over:
// Portico's ownership tags go on and LBC's tracking tags come off, so that from then on observation finds them as
// Portico's (by its tags, as everything else) and a restarted LBC would not find them as its own. Nothing else
// is changed here: the plan brings them to the Service's desired state in place like any load balancer of Portico's.
import { AddTagsCommand, RemoveTagsCommand, type Tag } from "@aws-sdk/client-elastic-load-balancing-v2";
import { LBC_NLB_CLASS } from "../classes.ts";
import { ConfigurationError } from "../errors.ts";
import type { EnsureResult, LoadBalancerIntent, Notice, ServiceRef } from "../provider.ts";
import { AWS_ANNOTATIONS } from "./annotations.ts";
import { call, type AwsClients } from "./clients.ts";
import {
  ADOPTED_FROM_LBC,
  ADOPTED_TAG,
  decideAdoption,
  describeAdoption,
  LBC_FINALIZER,
  LBC_TAG,
  recogniseLbc,
  type Adoption,
  type LbcObserved,
} from "./lbcAdoption.ts";
import type { DesiredLoadBalancer } from "./model.ts";
import { ownershipTags } from "./names.ts";
import {
  describeLoadBalancers,
  describeTargetGroups,
  observeLoadBalancer,
  observeTargetGroup,
  taggedResources,
} from "./observe.ts";

/** How soon a Service refused because LBC runs is looked at again: LBC's Lease lapses within 15 s of it stopping. */
export const LBC_RECHECK_MS = 15_000;

/** A refusal that lifts by itself once LBC stops: the controller looks again (recheckAfterMs) without a change. */
class WaitingForLbc extends ConfigurationError {
  readonly recheckAfterMs = LBC_RECHECK_MS;
}

export interface LbcTakeOverOptions {
  /** The cluster name LBC ran with (its --cluster-name): the value of its `elbv2.k8s.aws/cluster` tag. */
  cluster: string;
  /**
   * When LBC's NLB cannot serve the Service in place, make Portico's own beside it (a new DNS name) instead of
   * refusing. LBC's NLB is then left as it is: it is not Portico's to delete.
   */
  recreate?: boolean;
  /**
   * Who runs LBC now (the holder of its leader Lease, renewed recently), or undefined when nobody does. Throws
   * when it cannot tell: Portico does not take over from a controller that may still be running.
   */
  liveController?: () => Promise<string | undefined>;
  /** Removes LBC's finalizer from the Service when it is there; true when it was. Absent in dry runs. */
  releaseFinalizer?: (service: ServiceRef) => Promise<boolean>;
}

/** What the take-over would do for a Service: read by ensure and plan alike. */
export interface TakeOverView {
  adoption: Adoption;
  /** The adoption in words, and the refusal when there is one. */
  lines: string[];
  /** Why nothing may be done: ensure throws it (an Event and a condition), plan shows it. */
  refusal?: ConfigurationError;
}

export class LbcTakeOver {
  readonly options: LbcTakeOverOptions;
  private readonly clients: AwsClients;
  private readonly cluster: string;

  constructor(clients: AwsClients, porticoCluster: string, options: LbcTakeOverOptions) {
    this.clients = clients;
    this.cluster = porticoCluster;
    this.options = options;
  }

  async look(intent: LoadBalancerIntent, desired: DesiredLoadBalancer): Promise<TakeOverView> {
    const adoption = decideAdoption(desired, await this.read(intent.service));
    const lines = describeAdoption(adoption, this.options.recreate === true);
    // Only a Service LBC serves or served can have LBC working on it at the same time.
    if (adoption.kind !== "none" || intent.loadBalancerClass === LBC_NLB_CLASS) {
      const holder = await this.options.liveController?.();
      if (holder) {
        const refusal = new WaitingForLbc(
          "LoadBalancerControllerRunning",
          "spec.loadBalancerClass",
          `the AWS Load Balancer Controller still runs (${holder} renews its leader Lease) and would fight over this Service's NLB`,
          "scale the aws-load-balancer-controller Deployment to 0 (or stop it serving this Service); Portico takes the NLB over in place once its Lease has expired",
        );
        return { adoption, lines: [`refuse: ${refusal.message}`, ...lines], refusal };
      }
    }
    if (adoption.kind === "recreate" && !this.options.recreate) {
      const scheme = adoption.loadBalancer.scheme !== desired.scheme;
      const refusal = new ConfigurationError(
        "CannotAdoptInPlace",
        scheme ? `metadata.annotations[${AWS_ANNOTATIONS.scheme}]` : "metadata.annotations",
        `the AWS Load Balancer Controller's NLB ${adoption.loadBalancer.name} cannot serve the Service in place: ${adoption.reasons.join("; ")}`,
        "change the Service to match the NLB, or run the controller with --aws-take-over-lbc-recreate to get a new NLB (a new DNS name) beside it",
      );
      return { adoption, lines, refusal };
    }
    return { adoption, lines };
  }

  /**
   * Portico's ownership tags on LBC's NLB and target groups, then LBC's tracking tags off: each step is safe to
   * repeat, and one interrupted between them leaves resources observation finds as Portico's.
   */
  async take(service: ServiceRef, adoption: Adoption): Promise<string[]> {
    if (adoption.kind !== "adopt") return [];
    const resources = [
      ...(adoption.loadBalancer ? [{ arn: adoption.loadBalancer.arn, kind: "loadbalancer" }] : []),
      ...adoption.targetGroups.map((f) => ({ arn: f.group.observed.arn, kind: "targetgroup" })),
    ];
    for (const r of resources) {
      const tags: Tag[] = Object.entries({
        ...ownershipTags(this.cluster, service, r.kind),
        [ADOPTED_TAG]: ADOPTED_FROM_LBC,
      }).map(([Key, Value]) => ({ Key, Value }));
      await call("elbv2:AddTags", () =>
        this.clients.elbv2.send(new AddTagsCommand({ ResourceArns: [r.arn], Tags: tags })),
      );
      await call("elbv2:RemoveTags", () =>
        this.clients.elbv2.send(
          new RemoveTagsCommand({
            ResourceArns: [r.arn],
            TagKeys: [LBC_TAG.cluster, LBC_TAG.serviceStack, LBC_TAG.serviceResource],
          }),
        ),
      );
    }
    return resources.map((r) => `took over ${r.arn} from the AWS Load Balancer Controller`);
  }

  /**
   * After a pass that went through: what was taken over, as an Event, and LBC's finalizer released once nothing of
   * LBC's is left for the Service — never while LBC's NLB stands beside a new one of Portico's.
   */
  async after(
    service: ServiceRef,
    view: TakeOverView,
    taken: string[],
    result: EnsureResult,
  ): Promise<Notice[]> {
    const notices: Notice[] = [];
    const say = view.lines.join("; ");
    if (taken.length) notices.push({ type: "Normal", reason: "AdoptedLoadBalancer", message: say });
    if (view.adoption.kind === "recreate") {
      if (result.changes.some((c) => c.startsWith("create ")))
        notices.push({ type: "Warning", reason: "RecreatingLoadBalancer", message: say });
      return notices;
    }
    if (await this.options.releaseFinalizer?.(service))
      notices.push({
        type: "Normal",
        reason: "AdoptedLoadBalancer",
        message: `removed the AWS Load Balancer Controller's finalizer ${LBC_FINALIZER}: Portico owns the Service's NLB and target groups`,
      });
    return notices;
  }

  /** LBC's resources for the Service, found by LBC's tags and described as observation describes Portico's. */
  private async read(service: ServiceRef): Promise<LbcObserved> {
    const tagged = await taggedResources(this.clients, [
      { Key: LBC_TAG.cluster, Values: [this.options.cluster] },
      { Key: LBC_TAG.serviceStack, Values: [`${service.namespace}/${service.name}`] },
    ]);
    const found = recogniseLbc(
      tagged.map((r) => ({
        arn: r.ResourceARN!,
        tags: Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value])),
      })),
      this.options.cluster,
      service,
    );
    if (!found.loadBalancerArn && !found.targetGroups.length) return { targetGroups: [] };
    const [lbs, tgs] = await Promise.all([
      describeLoadBalancers(this.clients, found.loadBalancerArn ? [found.loadBalancerArn] : []),
      describeTargetGroups(
        this.clients,
        found.targetGroups.map((t) => t.arn),
      ),
    ]);
    const nlb = lbs.find((lb) => lb.Type === "network");
    const [loadBalancer, targetGroups] = await Promise.all([
      nlb ? observeLoadBalancer(this.clients, nlb, []) : undefined,
      Promise.all(
        tgs.map(async (tg) => ({
          observed: await observeTargetGroup(this.clients, tg),
          port: found.targetGroups.find((t) => t.arn === tg.TargetGroupArn)!.port,
          ipAddressType: tg.IpAddressType === "ipv6" ? ("ipv6" as const) : ("ipv4" as const),
        })),
      ),
    ]);
    return { ...(loadBalancer ? { loadBalancer } : {}), targetGroups };
  }
}
