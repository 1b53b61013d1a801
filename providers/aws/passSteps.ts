// What a plan's pass comes to, beyond its operations: whether it touches the targets alone (then an observation
// stands for the next passes), and which of its operations wait while a replacement load balancer provisions.
import type { Operation, Plan } from "./plan.ts";

/**
 * Nothing but targets to register or deregister (and the cluster's shared rules they need): the load balancer itself
 * is as desired.
 */
export function onlyTargets(p: Plan): boolean {
  return (
    p.replaced.length === 0 &&
    p.current !== undefined &&
    p.operations.every(
      (op) =>
        op.kind === "registerTargets" || op.kind === "deregisterTargets" || op.kind === "useSharedBackend",
    )
  );
}

/**
 * A replaced load balancer (and the target groups only it uses) is deleted only once its successor is
 * active, so the Service never has no working front door.
 */
export function makeBeforeBreak(p: Plan): { operations: Operation[]; waitForActive: boolean } {
  if (p.replaced.length === 0 || p.current?.state === "active")
    return { operations: p.operations, waitForActive: false };
  const replacedArns = new Set(p.replaced.map((lb) => lb.arn));
  const operations = p.operations.filter(
    (op) =>
      !(op.kind === "deleteLoadBalancer" && replacedArns.has(op.loadBalancerArn)) &&
      // What the old one still uses stays too: its target groups, its security group and the rules naming it.
      op.kind !== "deleteTargetGroup" &&
      op.kind !== "deleteSecurityGroup" &&
      op.kind !== "revokeBackendRules",
  );
  return { operations, waitForActive: true };
}
