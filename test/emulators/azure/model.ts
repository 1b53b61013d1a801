// What the emulator stores for each resource: the writable properties as the client sent them (normalised, with
// ARM's defaults filled in) plus what the platform assigns. Read-only back-references are never stored; they are
// computed from the other resources whenever a resource is rendered, so they cannot drift.
import type { TopLevelType } from "./ids.ts";

export type ProvisioningState = "Succeeded" | "Updating" | "Deleting" | "Failed";

export interface Sku {
  name: string;
  tier?: string;
}

interface Base<T extends TopLevelType, P> {
  id: string;
  type: T;
  name: string;
  subscriptionId: string;
  resourceGroup: string;
  location: string;
  tags: Record<string, string>;
  sku?: Sku;
  zones?: string[];
  etag: string;
  resourceGuid: string;
  provisioningState: ProvisioningState;
  /** The long-running operation that currently owns the resource, if any. */
  operationId?: string;
  /** NRP's name for the last operation on the resource, quoted in RetryableError details. */
  lastOperationName: string;
  properties: P;
}

// --- public IP addresses -----------------------------------------------------------------------------------------

export interface PublicIpProperties {
  publicIPAllocationMethod: "Static" | "Dynamic";
  publicIPAddressVersion: "IPv4" | "IPv6";
  idleTimeoutInMinutes: number;
  domainNameLabel?: string;
  ipTags: { ipTagType: string; tag: string }[];
  /** The public IP prefix the address is taken from, fixed at creation. */
  publicIPPrefixId?: string;
  /** Assigned by the platform once the address is provisioned (Static) or first used (Dynamic). */
  ipAddress?: string;
}

export type PublicIpAddress = Base<"publicIPAddresses", PublicIpProperties>;

export interface PublicIpPrefixProperties {
  prefixLength: number;
  publicIPAddressVersion: "IPv4" | "IPv6";
  ipTags: { ipTagType: string; tag: string }[];
  /** Assigned by the platform once the prefix is provisioned, e.g. `198.19.0.16/28`. */
  ipPrefix?: string;
}

export type PublicIpPrefix = Base<"publicIPPrefixes", PublicIpPrefixProperties>;

// --- load balancers ----------------------------------------------------------------------------------------------

export interface FrontendIpConfiguration {
  name: string;
  publicIPAddressId?: string;
  subnetId?: string;
  privateIPAddress?: string;
  privateIPAllocationMethod: "Static" | "Dynamic";
  privateIPAddressVersion: "IPv4" | "IPv6";
  zones?: string[];
}

export interface BackendAddress {
  name: string;
  ipAddress?: string;
  virtualNetworkId?: string;
  subnetId?: string;
  adminState?: string;
}

export interface BackendAddressPool {
  name: string;
  virtualNetworkId?: string;
  drainPeriodInSeconds?: number;
  loadBalancerBackendAddresses: BackendAddress[];
}

export type TransportProtocol = "Tcp" | "Udp" | "All";

export interface LoadBalancingRule {
  name: string;
  frontendIPConfigurationId?: string;
  backendAddressPoolId?: string;
  probeId?: string;
  protocol?: TransportProtocol;
  frontendPort?: number;
  backendPort?: number;
  idleTimeoutInMinutes: number;
  enableFloatingIP: boolean;
  enableTcpReset: boolean;
  disableOutboundSnat: boolean;
  loadDistribution: "Default" | "SourceIP" | "SourceIPProtocol";
}

export interface Probe {
  name: string;
  protocol?: "Tcp" | "Http" | "Https";
  port?: number;
  intervalInSeconds: number;
  numberOfProbes: number;
  probeThreshold: number;
  requestPath?: string;
}

export interface OutboundRule {
  name: string;
  frontendIPConfigurationIds: string[];
  backendAddressPoolId?: string;
  protocol?: TransportProtocol;
  allocatedOutboundPorts: number;
  idleTimeoutInMinutes: number;
  enableTcpReset: boolean;
}

export interface LoadBalancerProperties {
  frontendIPConfigurations: FrontendIpConfiguration[];
  backendAddressPools: BackendAddressPool[];
  loadBalancingRules: LoadBalancingRule[];
  probes: Probe[];
  outboundRules: OutboundRule[];
}

export type LoadBalancer = Base<"loadBalancers", LoadBalancerProperties>;

// --- virtual networks --------------------------------------------------------------------------------------------

export interface Subnet {
  name: string;
  addressPrefixes: string[];
  /** Whether the client sent `addressPrefix` (singular), so that it is rendered back the same way. */
  singlePrefix: boolean;
  networkSecurityGroupId?: string;
  privateEndpointNetworkPolicies: string;
  privateLinkServiceNetworkPolicies: string;
}

export interface VirtualNetworkProperties {
  addressPrefixes: string[];
  subnets: Subnet[];
}

export type VirtualNetwork = Base<"virtualNetworks", VirtualNetworkProperties>;

// --- network security groups -------------------------------------------------------------------------------------

export interface SecurityRule {
  name: string;
  description?: string;
  protocol: string;
  sourcePortRange?: string;
  sourcePortRanges: string[];
  destinationPortRange?: string;
  destinationPortRanges: string[];
  sourceAddressPrefix?: string;
  sourceAddressPrefixes: string[];
  destinationAddressPrefix?: string;
  destinationAddressPrefixes: string[];
  access: "Allow" | "Deny";
  priority: number;
  direction: "Inbound" | "Outbound";
}

export interface NetworkSecurityGroupProperties {
  securityRules: SecurityRule[];
}

export type NetworkSecurityGroup = Base<"networkSecurityGroups", NetworkSecurityGroupProperties>;

export type NetworkResource =
  PublicIpAddress | PublicIpPrefix | LoadBalancer | VirtualNetwork | NetworkSecurityGroup;

export interface ResourceGroup {
  id: string;
  name: string;
  subscriptionId: string;
  location: string;
  tags: Record<string, string>;
  provisioningState: "Succeeded" | "Deleting";
}
