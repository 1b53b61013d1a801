// Carries out a plan, one operation at a time, in its order, each by its resource's applier (lbc/ for the
// take-over, securityGroups/, loadBalancer/, targetGroups/, listeners/): the one writer of a Service's resources. Every operation is safe to
// repeat: a crash at any point leaves tagged resources that the next observation finds and the next plan completes.
import { ApplyState, type AppliedLoadBalancer, type ApplyContext, type Appliers } from "./applying.ts";
import { listenerAppliers } from "./listeners/apply.ts";
import { takeOverAppliers } from "./lbc/apply.ts";
import { loadBalancerAppliers } from "./loadBalancer/apply.ts";
import type { Operation } from "./plan.ts";
import { securityGroupAppliers } from "./securityGroups/apply.ts";
import { targetGroupAppliers } from "./targetGroups/apply.ts";

export type { AppliedLoadBalancer, ApplyContext } from "./applying.ts";

const APPLIERS: Appliers<Operation> = {
  ...takeOverAppliers,
  ...securityGroupAppliers,
  ...loadBalancerAppliers,
  ...targetGroupAppliers,
  ...listenerAppliers,
};

export async function apply(ops: Operation[], ctx: ApplyContext): Promise<AppliedLoadBalancer | undefined> {
  const state = new ApplyState(ctx);
  for (const op of ops)
    await (APPLIERS[op.kind] as (op: Operation, s: ApplyState) => Promise<void>)(op, state);
  return state.current;
}
