// The values of Azure's documented limits that Portico checks (limits.ts), on their own so the cloud-config
// reader, which lets a subscription set other values, needs none of the checking.
/** The limits checked, named as Azure's documentation and the ARM emulator name them. 0: not checked. */
export interface AzureLimits {
  /** Frontend IP configurations of one load balancer. */
  frontendIPConfigurationsPerLoadBalancer: number;
  /** Load-balancing rules of one load balancer. */
  rulesPerLoadBalancer: number;
  /** Load-balancing rules whose backend pool holds one address, over every load balancer. */
  rulesPerBackendAddress: number;
  /** Security rules of one network security group. */
  securityRulesPerGroup: number;
  /** IP addresses and ranges in one group's rules, sources and destinations each counted on their own. */
  addressPrefixesPerSecurityGroup: number;
}

/**
 * "Azure subscription and service limits": Load balancer limits (Standard load balancer) and Networking limits
 * (network security groups). Azure counts rules per backend NIC; Portico's pools hold IP addresses, so they are
 * counted per address.
 */
export const AZURE_LIMITS: Readonly<AzureLimits> = {
  frontendIPConfigurationsPerLoadBalancer: 600,
  rulesPerLoadBalancer: 1500,
  rulesPerBackendAddress: 300,
  securityRulesPerGroup: 1000,
  addressPrefixesPerSecurityGroup: 4000,
};
