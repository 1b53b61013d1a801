// What the emulated NLB edge knows of ELBv2 and EC2: load balancers, listeners, target groups and their targets,
// and security group rules, as the edge's reconciler reads them (nlbEdge.ts) and its plans take them.
import type { EdgeHealthCheck } from "./checkPlan.ts";

export interface EdgeTargetGroup {
  arn: string;
  protocol: string;
  targetType: "instance" | "ip";
  healthCheck: EdgeHealthCheck;
  /** The target group's attributes as ELBv2 lists them (only those set, when the emulator keeps no defaults). */
  attributes?: Readonly<Record<string, string>>;
  /**
   * Registered targets, resolved to addresses (instance targets: the instance's private address), with the
   * inbound rules of the target's own security groups when the edge knows them (instances); without them the
   * target admits everything.
   */
  targets: { id: string; ip: string; port: number; ingress?: EdgeIngressRule[] }[];
}

export interface EdgeListener {
  port: number;
  protocol: string;
  targetGroupArn: string;
  /** A TLS listener's (default) certificate. */
  certificateArn?: string;
}

/** One inbound rule of a security group: a protocol's port range from a CIDR or from another security group. */
export interface EdgeIngressRule {
  /** "tcp", "udp", or "-1" (every protocol). */
  protocol: string;
  fromPort: number;
  toPort: number;
  cidr?: string;
  /** The ID of the security group whose members it admits. */
  group?: string;
}

export interface EdgeLoadBalancer {
  arn: string;
  dnsName: string;
  /** The addresses the edge answers for this NLB. */
  addresses: string[];
  listeners: EdgeListener[];
  /**
   * The inbound rules of the NLB's security groups, which admit clients as EC2 does (what none admits is dropped,
   * so the client's connection times out); undefined for an NLB without security groups, which admits everyone.
   */
  ingress?: EdgeIngressRule[];
  /** The NLB's security groups: a target's group admits its traffic by naming one of them. */
  securityGroups?: string[];
}

/** The kernel's protocols a listener takes: a TCP_UDP listener both. */
export function kernelProtocols(listener: EdgeListener): ("tcp" | "udp")[] {
  if (listener.protocol === "TCP_UDP") return ["tcp", "udp"];
  return [listener.protocol === "UDP" ? "udp" : "tcp"];
}

/**
 * Whether the targets see the client's own address (ELBv2's `preserve_client_ip.enabled`): by default on, except
 * for ip targets behind TCP or TLS; never off for UDP and TCP_UDP (ELBv2 refuses to turn it off there). Otherwise
 * the NLB connects from its own private address.
 */
export function preservesClientIp(group: EdgeTargetGroup): boolean {
  if (group.protocol === "UDP" || group.protocol === "TCP_UDP") return true;
  const set = group.attributes?.["preserve_client_ip.enabled"];
  if (set !== undefined) return set === "true";
  return group.targetType === "instance";
}
