// The writes a plan makes to the NLB itself. Those without an ARN act on the Service's desired load balancer, which
// may not exist yet when the plan is made.
import type { DesiredLoadBalancer } from "../model.ts";

export type LoadBalancerOperation =
  | { kind: "createLoadBalancer"; loadBalancer: DesiredLoadBalancer }
  | { kind: "setSubnets"; subnets: string[] }
  /** The NLB's groups; OWN_SECURITY_GROUP stands for the Service's own until it is made. */
  | { kind: "setSecurityGroups"; groupIds: string[]; privateLink?: "on" | "off" }
  | { kind: "modifyLoadBalancerAttributes"; attributes: Record<string, string> }
  | { kind: "deleteLoadBalancer"; loadBalancerArn: string; name: string; reason: string };
