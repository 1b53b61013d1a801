// The AWS Load Balancer Controller's (LBC) resources for a Service, read by LBC's own tags, and what taking them over
// means: whether it may be done (LBC stopped, the NLB able to serve the Service in place), the names they keep, and
// LBC's finalizer released after. The retagging itself is a plan operation (operations.ts, apply.ts): Portico's
// ownership tags go on and LBC's tracking tags come off, so that from then on observation finds them as Portico's
// (by its tags, as everything else) and a restarted LBC would not find them as its own. Nothing else is changed:
// the plan brings them to the Service's desired state in place like any load balancer of Portico's.
import type { ResourceTagMapping } from "@aws-sdk/client-resource-groups-tagging-api";
import { LBC_NLB_CLASS } from "../../classes.ts";
import { ConfigurationError } from "../../errors.ts";
import type { EnsureResult, LoadBalancerIntent, Notice, ServiceRef } from "../../provider.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import type { AwsClients } from "../clients.ts";
import {
  adoptedNames,
  decideAdoption,
  describeAdoption,
  LBC_FINALIZER,
  LBC_TAG,
  lbcLoadBalancerName,
  recogniseLbc,
  renamed,
  renamesOf,
  type Adoption,
  type LbcObserved,
  type Renames,
  type TaggedArn,
} from "./adoption.ts";
import type { DesiredLoadBalancer, Observed } from "../model.ts";
import { TAG } from "../names.ts";
import {
  describeLoadBalancers,
  describeTargetGroups,
  observeLoadBalancer,
  observeTargetGroup,
  taggedResources,
} from "../state/observe.ts";

/** How long a listing of the stacks holding LBC's resources stands. */
const LISTING_TTL_MS = 60_000;

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
  /** Removes LBC's finalizer from the Service when it is there; true when it was. Absent where nothing is written (porticoctl). */
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
  /** The names each taken-over Service's resources kept, as last known (found again from tags after a restart). */
  private readonly renames = new Map<string, Renames>();
  /** The stacks (`namespace/name`) holding resources LBC tagged for its cluster, as the account's listing says. */
  private listing: { at: number; stacks: Set<string> } | undefined;
  private loading: Promise<Set<string>> | undefined;
  /** When LBC was last seen running: a listing from before then may miss what it made since. */
  private lastSeenLive = 0;

  constructor(clients: AwsClients, porticoCluster: string, options: LbcTakeOverOptions) {
    this.clients = clients;
    this.cluster = porticoCluster;
    this.options = options;
  }

  async look(intent: LoadBalancerIntent, desired: DesiredLoadBalancer): Promise<TakeOverView> {
    // The listeners' attributes the Service sets are read as observation reads them, so the plan made from what is
    // taken over is the plan the pass after the retagging would make.
    const ports = desired.listeners.filter((l) => Object.keys(l.attributes).length).map((l) => l.port);
    let adoption = decideAdoption(desired, await this.read(intent.service, ports));
    // Once Portico serves the Service with an NLB of its own (made beside LBC's when that could not serve in place),
    // LBC's is never taken over later, even when the Service comes to match it: that would replace the NLB clients
    // have moved to.
    const lbcNlb = adoption.kind === "adopt" ? adoption.loadBalancer : undefined;
    if (lbcNlb) {
      const other = (await this.ownLoadBalancers(intent.service)).find((arn) => arn !== lbcNlb.arn);
      if (other)
        adoption = {
          kind: "recreate",
          loadBalancer: lbcNlb,
          reasons: [`Portico already serves the Service with its own NLB ${other}`],
        };
    }
    const lines = describeAdoption(adoption, this.options.recreate === true);
    // Only a Service LBC serves or served can have LBC working on it at the same time.
    if (adoption.kind !== "none" || intent.loadBalancerClass === LBC_NLB_CLASS) {
      const holder = await this.options.liveController?.();
      if (holder) {
        this.lastSeenLive = Date.now();
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
   * The take-over went through (apply retagged what `look` found, lbc/apply.ts): its names are kept for the passes
   * that follow, and the Service is no longer among those the listing says hold LBC's resources.
   */
  taken(service: ServiceRef, adoption: Adoption): void {
    const names = renamesOf(adoption);
    if (names) this.renames.set(service.uid, names);
    this.listing?.stacks.delete(`${service.namespace}/${service.name}`);
  }

  /** The desired load balancer under the names of what was taken over for the Service, as last known. */
  named(uid: string, desired: DesiredLoadBalancer): DesiredLoadBalancer {
    const names = this.renames.get(uid);
    return names ? renamed(desired, names) : desired;
  }

  /**
   * After a full observation, the taken-over names as Portico's own tags show them (what a restarted controller
   * knows): undefined when the observation shows none, and the names last known stand.
   */
  namedAfter(
    service: ServiceRef,
    wanted: DesiredLoadBalancer,
    observed: Observed,
  ): DesiredLoadBalancer | undefined {
    const lbcName = lbcLoadBalancerName(this.options.cluster, service, wanted.scheme);
    const found = adoptedNames(wanted, observed, lbcName, service);
    if (!found) return undefined;
    this.renames.set(service.uid, found);
    return renamed(wanted, found);
  }

  /**
   * After a pass that went through: what was taken over, as an Event, and LBC's finalizer released once nothing of
   * LBC's is left for the Service — never while LBC's NLB stands beside a new one of Portico's.
   */
  async after(
    service: ServiceRef,
    view: TakeOverView,
    taken: boolean,
    result: EnsureResult,
  ): Promise<EnsureResult> {
    const notices: Notice[] = [];
    const told = () => ({ ...result, notices: [...result.notices, ...notices] });
    const say = view.lines.join("; ");
    if (taken) notices.push({ type: "Normal", reason: "AdoptedLoadBalancer", message: say });
    if (view.adoption.kind === "recreate") {
      if (result.changes.some((c) => c.startsWith("create ")))
        notices.push({ type: "Warning", reason: "RecreatingLoadBalancer", message: say });
      return told();
    }
    if (await this.options.releaseFinalizer?.(service))
      notices.push({
        type: "Normal",
        reason: "AdoptedLoadBalancer",
        message: `removed the AWS Load Balancer Controller's finalizer ${LBC_FINALIZER}: Portico owns the Service's NLB and target groups`,
      });
    return told();
  }

  /** The NLBs Portico's tags say are the Service's (read only when about to take over LBC's). */
  private async ownLoadBalancers(service: ServiceRef): Promise<string[]> {
    const tagged = await taggedResources(this.clients, [
      { Key: TAG.cluster, Values: [this.cluster] },
      { Key: TAG.serviceUid, Values: [service.uid] },
    ]);
    return tagged.map((r) => r.ResourceARN!).filter((arn) => arn.includes(":loadbalancer/"));
  }

  /**
   * Which Services' stacks hold LBC's resources: one paged read for the cluster at most every minute instead of a
   * read per Service and pass. It lags only behind what LBC made while running, so a listing older than the last
   * time LBC was seen running is read again; a Service it names is read alone before anything is done.
   */
  private async listed(): Promise<Set<string>> {
    const l = this.listing;
    if (l && Date.now() - l.at < LISTING_TTL_MS && l.at > this.lastSeenLive) return l.stacks;
    this.loading ??= (async () => {
      const at = Date.now();
      const resources = await taggedResources(this.clients, [
        { Key: LBC_TAG.cluster, Values: [this.options.cluster] },
      ]);
      const stacks = new Set(resources.flatMap((r) => taggedArn(r).tags[LBC_TAG.serviceStack] ?? []));
      this.listing = { at, stacks };
      return stacks;
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** LBC's resources for the Service, found by LBC's tags and described as observation describes Portico's. */
  private async read(service: ServiceRef, listenerAttributePorts: number[]): Promise<LbcObserved> {
    const stack = `${service.namespace}/${service.name}`;
    // Most Services have nothing of LBC's (left): the account's listing says so without a read of their own.
    if (!(await this.listed()).has(stack)) return { targetGroups: [] };
    const tagged = await taggedResources(this.clients, [
      { Key: LBC_TAG.cluster, Values: [this.options.cluster] },
      { Key: LBC_TAG.serviceStack, Values: [stack] },
    ]);
    const found = recogniseLbc(tagged.map(taggedArn), this.options.cluster, service);
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
      nlb ? observeLoadBalancer(this.clients, nlb, listenerAttributePorts) : undefined,
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

function taggedArn(r: ResourceTagMapping): TaggedArn {
  return {
    arn: r.ResourceARN!,
    tags: Object.fromEntries((r.Tags ?? []).map((t) => [t.Key!, t.Value])),
  };
}
