// The plan: the smallest list of ELBv2/EC2 operations that turns what is observed into what is desired. Pure: the
// same inputs always give the same plan, so it is unit-tested exhaustively and shown by `porticoctl plan` without
// touching the cloud. Each resource plans its own part (securityGroups/, loadBalancer/, targetGroups/, listeners/);
// this file only orders them make-before-break: everything made or changed first, in the order each needs the one
// before (groups, the NLB, target groups, listeners), then what is no longer used, in the reverse order.
import type { Describers } from "./resourcePlan.ts";
import type { DesiredLoadBalancer, Observed, ObservedLoadBalancer } from "./model.ts";
import type { LoadBalancerOperation } from "./loadBalancer/operations.ts";
import { loadBalancerDescriptions, planLoadBalancer, planLoadBalancerDeletion } from "./loadBalancer/plan.ts";
import type { ListenerOperation } from "./listeners/operations.ts";
import { listenerDescriptions, planListeners } from "./listeners/plan.ts";
import type { SecurityGroupOperation } from "./securityGroups/operations.ts";
import {
  planSecurityGroupDeletion,
  planSecurityGroups,
  securityGroupDescriptions,
} from "./securityGroups/plan.ts";
import type { TargetGroupOperation } from "./targetGroups/operations.ts";
import { takeOverDescriptions, type TakeOverOperation } from "./lbc/operations.ts";
import { planTargetGroupDeletion, planTargetGroups, targetGroupDescriptions } from "./targetGroups/plan.ts";

export type Operation =
  | TakeOverOperation
  | SecurityGroupOperation
  | LoadBalancerOperation
  | TargetGroupOperation
  | ListenerOperation;

export interface Plan {
  operations: Operation[];
  /** The load balancer that serves the Service once the plan is applied (absent until it is created). */
  current?: ObservedLoadBalancer;
  /** Load balancers of this Service that are replaced by the desired one. */
  replaced: ObservedLoadBalancer[];
}

/**
 * `first`: what the pass does before the Service's own resources are touched, planned from the cluster's state (the
 * take-over's retagging, the Service's part in the shared backend group).
 */
export function plan(desired: DesiredLoadBalancer, observed: Observed, first: Operation[] = []): Plan {
  const current = observed.loadBalancers.find((lb) => lb.name === desired.name);
  const replaced = observed.loadBalancers.filter((lb) => lb !== current);
  const groups = planSecurityGroups(desired, observed);
  const loadBalancer = planLoadBalancer(desired, current, replaced, groups.ownGroupId);
  const targetGroups = planTargetGroups(desired.targetGroups, observed.targetGroups);
  const listeners = planListeners(desired.listeners, current?.listeners ?? [], observed.targetGroups);
  const operations: Operation[] = [
    ...first,
    ...groups.make,
    ...loadBalancer.make,
    ...targetGroups.make,
    ...listeners,
    ...loadBalancer.break,
    ...targetGroups.break,
    ...groups.break,
  ];
  return { operations, ...(current ? { current } : {}), replaced };
}

/** Everything that removes a Service: load balancers first (their listeners go with them), then what they used. */
export function planDeletion(observed: Observed): Operation[] {
  return [
    ...planLoadBalancerDeletion(observed.loadBalancers),
    ...planTargetGroupDeletion(observed.targetGroups),
    ...planSecurityGroupDeletion(observed),
  ];
}

const DESCRIPTIONS: Describers<Operation> = {
  ...takeOverDescriptions,
  ...securityGroupDescriptions,
  ...loadBalancerDescriptions,
  ...targetGroupDescriptions,
  ...listenerDescriptions,
};

/** An operation in one line, for logs. */
export function describeOperation(op: Operation): string {
  return describeOperations([op]).join("; ");
}

/** The operations in words, a line for each thing they change, for Events and `porticoctl plan`. */
export function describeOperations(ops: readonly Operation[]): string[] {
  return ops.flatMap((op) => (DESCRIPTIONS[op.kind] as (op: Operation) => string | string[])(op));
}
