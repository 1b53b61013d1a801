// The shapes Portico compares: what a Service should have in ELBv2/EC2 (desired) and what is there (observed).

export type ListenerProtocol = "TCP" | "UDP" | "TCP_UDP" | "TLS";
/** The protocol of a Service's ports on one number: a TCP and a UDP port with the same number share TCP_UDP. */
export type GroupProtocol = "TCP" | "UDP" | "TCP_UDP";

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
  /** A CIDR, or a managed prefix list ID (`pl-…`). */
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
  /** Absent: IPv4 targets. */
  ipAddressType?: "ipv6";
  vpcId: string;
  healthCheck: HealthCheck;
  attributes: Record<string, string>;
  targets: Target[];
  tags: Record<string, string>;
}

export interface DesiredListener {
  port: number;
  protocol: ListenerProtocol;
  /** The first is the listener's default certificate; the others are added to its certificate list. */
  certificateArns: string[];
  sslPolicy?: string;
  /** TLS listeners only; absent: ELBv2's default ("None"). */
  alpnPolicy?: string;
  /** Listener attributes (e.g. tcp.idle_timeout.seconds) the Service sets; others are left as they are. */
  attributes: Record<string, string>;
  targetGroupName: string;
}

/** The Service's own (managed) security group, standing for its ID before it exists. */
export const OWN_SECURITY_GROUP = "own";
/** The cluster's shared backend group, standing for its ID until the plan that needs it first makes it. */
export const SHARED_BACKEND_GROUP = "(the shared backend group)";

/**
 * An ingress rule Portico adds for one Service to a backend (node or pod) security group so an NLB without
 * security groups reaches its targets: from an address range (`source`, a CIDR) to one port. (NLBs with groups
 * share range rules instead: securityGroups/backendRanges.ts.)
 */
export interface BackendRule {
  groupId: string;
  protocol: "tcp" | "udp";
  port: number;
  source: string;
}

export interface ObservedBackendRule extends BackendRule {
  ruleId: string;
}

/** Where a subnet's NLB address comes from, when the Service fixes it (`SubnetMappings`). */
export interface SubnetMapping {
  subnetId: string;
  allocationId?: string;
  privateIPv4Address?: string;
  ipv6Address?: string;
}

export interface DesiredLoadBalancer {
  name: string;
  /** Named by the user: what cannot change in place is then not part of the name, and must be checked. */
  nameFixed?: true;
  scheme: "internal" | "internet-facing";
  subnets: string[];
  ipAddressType: "ipv4" | "dualstack";
  attributes: Record<string, string>;
  tags: Record<string, string>;
  /** Static addresses per subnet; absent: AWS picks them (and `subnets` is all there is to say). */
  subnetMappings?: SubnetMapping[];
  /** The group Portico makes for the Service; absent when the user brings groups or disables them. */
  securityGroup?: DesiredSecurityGroup;
  /** The user's own groups (IDs) on the NLB; Portico never changes or deletes them. */
  userSecurityGroups: string[];
  /** SetSecurityGroups' EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic; absent: left as it is. */
  privateLinkInboundRules?: "on" | "off";
  /** Ingress rules on the targets' security groups for an NLB without groups; empty otherwise. */
  backendRules: BackendRule[];
  /** The cluster's shared backend group, on the NLB beside its own (or the user's) when backend rules are managed. */
  sharedBackendGroup?: string;
  listeners: DesiredListener[];
  targetGroups: DesiredTargetGroup[];
}

export interface ObservedListener {
  arn: string;
  port: number;
  protocol: ListenerProtocol;
  /** The default certificate first, then the others (DescribeListenerCertificates). */
  certificateArns: string[];
  sslPolicy?: string;
  alpnPolicy?: string;
  attributes: Record<string, string>;
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
  /** Per subnet, the addresses AWS reports (the allocation ID, private IPv4, IPv6 it uses). */
  subnetMappings: SubnetMapping[];
  privateLinkInboundRules?: "on" | "off";
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
  /** ELBv2's health of each of those targets, by `id:port` (state and, when failing, its reason). */
  health?: Record<string, { state: string; reason?: string }>;
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
  /** Rules Portico added to backend security groups for this Service (found by their tags). */
  backendRules: ObservedBackendRule[];
}

/** Where a Service's NLB goes: its VPC and subnets. */
export interface Network {
  vpcId: string;
  subnets: string[];
  /** Each subnet's IPv4 and IPv6 CIDRs, to check the static addresses a Service asks for. */
  cidrs?: Record<string, { ipv4: string[]; ipv6: string[] }>;
}
