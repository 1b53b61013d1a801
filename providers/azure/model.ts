// The shapes Portico compares: what one Service should have in ARM (desired) and what ARM holds (observed).
import type { LoadBalancer, NetworkSecurityGroup, PublicIPAddress } from "@azure/arm-network";
import type { ServiceRef } from "../provider.ts";
import type { IpFamily } from "./names.ts";
import type { IpTag } from "./annotations/publicIp.ts";
import type { ServiceFields } from "./annotations/fields.ts";

export type { LoadBalancer, NetworkSecurityGroup, PublicIPAddress };

/** The virtual network the cluster's nodes (and, with Azure CNI, its pods) live in. */
export interface Network {
  vnetId: string;
  addressPrefixes: string[];
  /** By lower-cased subnet name. */
  subnets: Record<string, { id: string; addressPrefixes: string[] }>;
}

export interface ProbeSpec {
  name: string;
  protocol: "Tcp" | "Http" | "Https";
  port: number;
  requestPath?: string;
  intervalInSeconds: number;
  numberOfProbes: number;
}

export interface RuleSpec {
  name: string;
  protocol: "Tcp" | "Udp";
  frontendPort: number;
  backendPort: number;
  /** Name of the probe (one of the Service's), or none: every backend counts as healthy. */
  probe?: string;
  floatingIP: boolean;
  /** TCP only. */
  idleTimeoutInMinutes?: number;
  /** TCP only: a reset to both ends when the idle timeout closes a connection. */
  tcpReset?: boolean;
  /** SourceIP keeps a client on one backend (`sessionAffinity: ClientIP`), as cloud-provider-azure does. */
  loadDistribution: "Default" | "SourceIP";
}

export interface BackendAddress {
  name: string;
  ip: string;
  /** Down: a terminating pod that still serves; it takes no new connections, its open ones continue. */
  adminState?: "Down";
}

export interface PoolSpec {
  name: string;
  /** The cluster's node pool, shared by the instance-target Services of a load balancer. */
  shared: boolean;
  addresses: BackendAddress[];
}

export type FrontendSpec =
  | { kind: "public"; publicIpId: string }
  /** Family absent: IPv4. */
  | { kind: "internal"; subnetId: string; privateIp?: string; family?: IpFamily };

/** The public IP a Service's frontend uses: one Portico makes and owns, or one of the user's that it only uses. */
export type PublicIpChoice =
  | {
      kind: "managed";
      name: string;
      resourceGroup: string;
      id: string;
      tags: Record<string, string>;
      /** `<label>.<region>.cloudapp.azure.com`; none: the public IP has no DNS name. */
      dnsLabel?: string;
      /** Fixed when the public IP is created. */
      ipTags: IpTag[];
      /** The public IP prefix the address comes from, fixed when the public IP is created. */
      prefixId?: string;
      /** Absent: IPv4. */
      version?: IpFamily;
      /**
       * Made by another controller for this Service, and taken over now with its address
       * (adoption/adoption.ts).
       */
      adopt?: { from: string; address?: string };
    }
  | { kind: "user"; name: string; resourceGroup: string; id: string }
  /** Another Service's public IP that Portico made, which this Service shares (recorded in its tags). */
  | { kind: "shared"; name: string; resourceGroup: string; id: string };

export interface DesiredSecurityRule {
  name: string;
  /** Deny: everyone else inside the virtual network, below the Service's allow rules. */
  access: "Allow" | "Deny";
  protocol: "Tcp" | "Udp";
  destinationPort: number;
  sources: string[];
  /** The frontend's address (floating IP), or the backends the load balancer forwards to. */
  destination: "frontend" | string[];
}

export interface DesiredLoadBalancer {
  name: string;
  resourceGroup: string;
  id: string;
  internal: boolean;
  /** Tags a new load balancer is created with. */
  tags: Record<string, string>;
  /** The Service's own load balancer (per-Service mode), not a shared one. */
  perService: boolean;
}

/** One family's side of a Service (a dual-stack Service has two, on the same load balancer). */
export interface DesiredService {
  service: ServiceRef;
  family: IpFamily;
  cluster: string;
  location: string;
  vnetId: string;
  loadBalancer: DesiredLoadBalancer;
  frontendName: string;
  frontend: FrontendSpec;
  publicIp?: PublicIpChoice;
  pool: PoolSpec;
  probes: ProbeSpec[];
  rules: RuleSpec[];
  /** Whether the shared load balancer must record the Service's name (no Portico public IP records it). */
  recordOnLoadBalancer: boolean;
  /** Undefined when the cluster has no network security group configured. */
  securityRules?: DesiredSecurityRule[];
  /** Marks the Service's security rules as Portico's and names their Service (≤140 characters). */
  securityRuleDescription: string;
  /** The Service's fields that decided these parts, for refusals about what it shares to name. */
  fields: ServiceFields;
}

/** What exists in ARM that may concern a Service; ownership is decided by the pure functions reading it. */
export interface Observed {
  /** Every load balancer in the load balancers' resource group. */
  loadBalancers: LoadBalancer[];
  /** Every public IP in the resource groups public IPs of this Service may live in. */
  publicIps: PublicIPAddress[];
  securityGroup?: NetworkSecurityGroup;
}
