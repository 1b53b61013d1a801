// The shapes Portico compares: what a Service should have in ELBv2/EC2 (desired) and what is there (observed).

export type ListenerProtocol = "TCP" | "UDP" | "TCP_UDP" | "TLS";

export interface HealthCheck {
  protocol: "TCP" | "HTTP" | "HTTPS";
  /** A port number as a string, or "traffic-port". */
  port: string;
  path?: string;
  intervalSeconds: number;
  timeoutSeconds: number;
  healthyThreshold: number;
  unhealthyThreshold: number;
  /** HTTP success codes, e.g. "200-399". */
  matcher?: string;
}

export interface Target {
  id: string;
  port: number;
}

export interface IngressRule {
  protocol: "tcp" | "udp";
  port: number;
  cidr: string;
}

export interface DesiredSecurityGroup {
  name: string;
  description: string;
  vpcId: string;
  ingress: IngressRule[];
  tags: Record<string, string>;
}

export interface DesiredTargetGroup {
  name: string;
  protocol: ListenerProtocol;
  port: number;
  targetType: "instance" | "ip";
  vpcId: string;
  healthCheck: HealthCheck;
  attributes: Record<string, string>;
  targets: Target[];
  tags: Record<string, string>;
}

export interface DesiredListener {
  port: number;
  protocol: ListenerProtocol;
  certificateArns: string[];
  sslPolicy?: string;
  targetGroupName: string;
}

export interface DesiredLoadBalancer {
  name: string;
  scheme: "internal" | "internet-facing";
  subnets: string[];
  ipAddressType: "ipv4" | "dualstack";
  attributes: Record<string, string>;
  tags: Record<string, string>;
  securityGroup: DesiredSecurityGroup;
  listeners: DesiredListener[];
  targetGroups: DesiredTargetGroup[];
}

export interface ObservedListener {
  arn: string;
  port: number;
  protocol: ListenerProtocol;
  certificateArns: string[];
  sslPolicy?: string;
  targetGroupArn?: string;
}

export interface ObservedLoadBalancer {
  arn: string;
  name: string;
  dnsName: string;
  scheme: string;
  state: string;
  subnets: string[];
  securityGroups: string[];
  ipAddressType: string;
  attributes: Record<string, string>;
  listeners: ObservedListener[];
}

export interface ObservedTargetGroup {
  arn: string;
  name: string;
  protocol: string;
  port: number;
  targetType: string;
  healthCheck: HealthCheck;
  attributes: Record<string, string>;
  /** Registered targets that are not already draining. */
  targets: Target[];
  loadBalancerArns: string[];
}

export interface ObservedSecurityGroup {
  id: string;
  name: string;
  ingress: IngressRule[];
}

/** Everything that exists in the cloud for one Service (found by its ownership tags). */
export interface Observed {
  loadBalancers: ObservedLoadBalancer[];
  targetGroups: ObservedTargetGroup[];
  securityGroups: ObservedSecurityGroup[];
}
