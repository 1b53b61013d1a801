// The Microsoft.Network resource provider's validation errors. Those marked "ARM returns" are quoted from ARM
// responses on public record; the rest enforce documented limits whose exact error code Azure does not publish,
// and are named after NRP's conventions.
import { ArmError } from "./errors.ts";

const badRequest = (code: string, message: string): ArmError => new ArmError(400, code, message);

/** ARM returns this for any reference to a resource (or child resource) that does not exist. */
export const invalidResourceReference = (referenced: string, referencing: string): ArmError =>
  badRequest(
    "InvalidResourceReference",
    `Resource ${referenced} referenced by resource ${referencing} was not found. Please make sure that the ` +
      "referenced resource exists, and that both resources are in the same region.",
  );

/** ARM returns this when a load balancer and a public IP of its frontend differ in SKU. */
export const publicIpAndLbSkuDoNotMatch = (
  lbSku: string,
  lbId: string,
  pipSku: string,
  pipId: string,
): ArmError =>
  badRequest(
    "PublicIPAndLBSkuDoNotMatch",
    `${lbSku} sku load balancer ${lbId} cannot reference ${pipSku} sku publicIP ${pipId}.`,
  );

/** ARM returns this for a Standard public IP with Dynamic allocation. */
export const standardSkuPublicIpMustBeStatic = (pipId: string): ArmError =>
  badRequest(
    "StandardSkuPublicIPAddressesMustBeStatic",
    `Standard sku publicIp ${pipId} must have AllocationMethod set to Static.`,
  );

/** ARM returns this when deleting a public IP that a frontend (or NIC) still uses. */
export const publicIpCannotBeDeleted = (pipId: string, userId: string): ArmError =>
  badRequest(
    "PublicIPAddressCannotBeDeleted",
    `Public IP address ${pipId} can not be deleted since it is still allocated to resource ${userId}. In order to ` +
      "delete the public IP, disassociate/detach the Public IP address from the resource.  To learn how to do " +
      "this, see aka.ms/deletepublicip.",
  );

/** ARM returns this when changing the SKU, allocation or version of a public IP that is in use. */
export const publicIpInUseCannotUpdate = (pipId: string, userId: string): ArmError =>
  badRequest(
    "PublicIPAddressInUseCannotUpdate",
    `Public IP address ${pipId} is in use by ipconfig ${userId} and cannot be updated.`,
  );

/** ARM returns this when two frontends of one load balancer use the same public IP. */
export const publicIpReferencedByMultipleIpConfigs = (pipId: string, lbId: string): ArmError =>
  badRequest(
    "PublicIPReferencedByMultipleIPConfigs",
    `Public ip address ${pipId} is referenced by multiple ipconfigs in resource ${lbId}.`,
  );

/** A public IP already serves another resource's frontend; no public record of NRP's code for this case. */
export const publicIpInUseByAnotherResource = (
  pipId: string,
  userId: string,
  requesterId: string,
): ArmError =>
  badRequest(
    "PublicIPAddressInUse",
    `Public IP address ${pipId} is already in use by ${userId} and cannot be referenced by ${requesterId}.`,
  );

/** ARM returns this for a frontend with neither a subnet nor a public IP. */
export const frontendHasNoSubnetOrPublicIp = (frontendId: string): ArmError =>
  badRequest(
    "FrontendIPConfigHasNoSubnetOrPublicIP",
    `Frontend IP Configuration ${frontendId} must reference either a Subnet or a Public IP Address.`,
  );

/** ARM returns this for a frontend with both a subnet and a public IP. */
export const frontendHasBothSubnetAndPublicIp = (frontendId: string): ArmError =>
  badRequest(
    "FrontendIPConfigHasBothSubnetAndPublicIP",
    `Frontend IP Configuration ${frontendId} must not reference both a Subnet and a Public IP Address.`,
  );

/** ARM returns this for two rules without floating IP sharing protocol, backend port and backend pool. */
export const rulesUseSameBackendPortProtocolAndPool = (
  ruleA: string,
  ruleB: string,
  protocol: string,
  port: number,
  poolId: string,
): ArmError =>
  badRequest(
    "RulesUseSameBackendPortProtocolAndPool",
    `Load balancing rules ${ruleA} and ${ruleB} with floating IP disabled use the same protocol ${protocol} and ` +
      `backend port ${port}, and must not be used with the same backend address pool ${poolId}.`,
  );

/** Frontend ports must be unique per frontend and protocol (documented); NRP's code is not on public record. */
export const rulesUseSameFrontendPortAndProtocol = (
  ruleA: string,
  ruleB: string,
  protocol: string,
  port: number,
  frontendId: string,
): ArmError =>
  badRequest(
    "RulesUseSameFrontendIPConfigurationProtocolAndPort",
    `Load balancing rules ${ruleA} and ${ruleB} use the same frontend IP configuration ${frontendId}, protocol ` +
      `${protocol} and frontend port ${port}.`,
  );

/** ARM returns this for a request path on a TCP probe. */
export const probeRequestPathIsNotNull = (probeId: string, protocol: string): ArmError =>
  badRequest(
    "ProbeRequestPathIsNotNull",
    `Request path for probe ${probeId} must be null when its protocol is ${protocol}.`,
  );

/** An Http/Https probe needs a request path (documented); NRP's code is not on public record. */
export const probeRequestPathIsNull = (probeId: string, protocol: string): ArmError =>
  badRequest(
    "ProbeRequestPathIsNull",
    `Request path for probe ${probeId} must be specified when its protocol is ${protocol}.`,
  );

/**
 * A property outside its documented range (ports, probe interval and counts, idle timeouts); NRP's exact code for
 * each is not on public record, so they share one.
 */
export const propertyOutOfRange = (
  what: string,
  id: string,
  value: number,
  min: number,
  max: number,
): ArmError =>
  badRequest(
    "InvalidParameterValue",
    `${what} of ${id} has invalid value ${value}. The value must be between ${min} and ${max}.`,
  );

export const missingRequiredProperty = (property: string, id: string): ArmError =>
  badRequest("MissingRequiredProperty", `Property '${property}' is required for ${id}.`);

/** HA ports (protocol All on port 0) are documented as internal Standard load balancer only. */
export const haPortsNotAllowed = (ruleId: string): ArmError =>
  badRequest(
    "LoadBalancingRuleWithAnyPortRequiresInternalStandardLoadBalancer",
    `Load balancing rule ${ruleId} uses port 0 (HA ports), which requires protocol All on an internal Standard load balancer.`,
  );

/** IP-based backend pools are documented as Standard SKU only. */
export const ipBasedPoolRequiresStandard = (poolId: string): ArmError =>
  badRequest(
    "IpBasedBackendAddressPoolRequiresStandardSkuLoadBalancer",
    `Backend address pool ${poolId} has IP addresses; this requires a Standard SKU load balancer.`,
  );

export const invalidBackendAddress = (poolId: string, detail: string): ArmError =>
  badRequest("InvalidLoadBalancerBackendAddress", `Backend address pool ${poolId}: ${detail}`);

export const privateIpNotInSubnet = (ip: string, subnetId: string, prefix: string): ArmError =>
  badRequest(
    "PrivateIPAddressNotInSubnet",
    `Private static IP address ${ip} does not belong to the range of subnet prefix ${prefix} of subnet ${subnetId}.`,
  );

export const privateIpInUse = (ip: string, userId: string): ArmError =>
  badRequest("PrivateIPAddressInUse", `IP configuration ${userId} is using the private IP address ${ip}.`);

export const subnetFull = (subnetId: string): ArmError =>
  badRequest("SubnetIsFull", `Subnet ${subnetId} has no free IP addresses.`);

/** ARM returns this when deleting (or dropping) a subnet that frontends still use. */
export const inUseSubnetCannotBeDeleted = (subnetName: string, userId: string): ArmError =>
  badRequest(
    "InUseSubnetCannotBeDeleted",
    `Subnet ${subnetName} is in use by ${userId} and cannot be deleted. In order to delete the subnet, delete all ` +
      "the resources within the subnet. See aka.ms/deletesubnet.",
  );

/** ARM returns this when deleting a network security group that subnets still use. */
export const inUseNsgCannotBeDeleted = (nsgId: string, users: string[]): ArmError =>
  badRequest(
    "InUseNetworkSecurityGroupCannotBeDeleted",
    `Network security group ${nsgId} cannot be deleted because it is in use by the following resources: ` +
      `${users.join(", ")}. In order to delete the Network security group, remove the association with the resource(s). ` +
      "To learn how to do this, see aka.ms/deletensg.",
  );

/** ARM returns this for a subnet outside its virtual network's address space. */
export const subnetOutsideVnet = (subnet: string, vnet: string): ArmError =>
  badRequest(
    "NetcfgSubnetRangeOutsideVnet",
    `Subnet '${subnet}' is not valid because its IP address range is outside the IP address range of virtual network '${vnet}'.`,
  );

/** ARM returns this for overlapping subnets in one virtual network. */
export const subnetsOverlap = (subnet: string, vnet: string): ArmError =>
  badRequest(
    "NetcfgSubnetRangesOverlap",
    `Subnet '${subnet}' is not valid because its IP address range overlaps with that of an existing subnet in virtual network '${vnet}'.`,
  );

export const invalidAddressPrefix = (prefix: string): ArmError =>
  badRequest("NetcfgInvalidIPAddressPrefix", `IP address prefix ${prefix} is invalid.`);

/** ARM returns this for a security rule priority outside 100-4096. */
export const securityRuleInvalidPriority = (ruleId: string, priority: number): ArmError =>
  badRequest(
    "SecurityRuleInvalidPriority",
    `Security rule ${ruleId} has invalid Priority. Value provided: ${priority} Allowed range 100-4096.`,
  );

/** Two rules of one direction may not share a priority (documented); NRP's code is not on public record. */
export const securityRulesConflict = (a: string, b: string, priority: number, direction: string): ArmError =>
  badRequest(
    "SecurityRuleConflict",
    `Security rules ${a} and ${b} have the same Priority ${priority} and Direction ${direction}.`,
  );

export const securityRuleInvalidAddressPrefixes = (ruleId: string, property: string): ArmError =>
  badRequest(
    "SecurityRuleParameterContainsUnsupportedValue",
    `Security rule ${ruleId} must set exactly one of ${property} and ${property}es.`,
  );

/** ARM's wording for a public IP idle timeout outside 4-30; the code that goes with it is not on public record. */
export const publicIpIdleTimeoutOutOfRange = (id: string): ArmError =>
  badRequest(
    "PublicIPIdleTimeoutIsOutOfRange",
    `Public IP address ${id} has invalid Idle Timeout. The value must be between 4 and 30.`,
  );

/** Two children of one resource with the same name; NRP's code is not on public record. */
export const duplicateChildName = (parentId: string, segment: string, name: string): ArmError =>
  badRequest("DuplicateResourceName", `Resource ${parentId} has more than one ${segment} named ${name}.`);

/** Honest refusal of a feature the emulator does not model, so that nothing passes here that Azure might refuse. */
export const unsupportedByEmulator = (what: string): ArmError =>
  badRequest("UnsupportedByEmulator", `${what} is not modelled by the Portico Azure emulator.`);

// --- documented limits (limits.ts) ----------------------------------------------------------------------------

/** ARM returns this, in these words, for a load balancer with more frontends than its SKU allows. */
export const frontendCountLimitReached = (sku: string, lbId: string, limit: number): ArmError =>
  badRequest(
    "LoadBalancerFrontendIPConfigurationCountLimitReached",
    `${sku} sku load balancer ${lbId} cannot have more than ${limit} FrontendIPConfigurations.`,
  );

/** The rules-per-load-balancer limit is documented; NRP's code for it is not on public record. */
export const ruleCountLimitReached = (sku: string, lbId: string, limit: number): ArmError =>
  badRequest(
    "LoadBalancerRuleCountLimitReached",
    `${sku} sku load balancer ${lbId} cannot have more than ${limit} load balancing and inbound NAT rules combined.`,
  );

/**
 * Azure counts rules per NIC; ARM's message names the NIC's IP configuration ("cannot have more than N NAT or
 * load balancing rules combined"). Its code is not on public record, and an IP-based backend has no NIC here.
 */
export const backendAddressRuleCountLimitReached = (
  ip: string,
  vnetId: string,
  lbId: string,
  count: number,
  limit: number,
): ArmError =>
  badRequest(
    "BackendAddressRuleCountLimitReached",
    `Backend address ${ip} of virtual network ${vnetId} cannot have more than ${limit} load balancing, inbound NAT ` +
      `and outbound rules combined; load balancer ${lbId} would give it ${count}.`,
  );

/** The backend pool size is documented; NRP's code for it is not on public record. */
export const backendPoolSizeLimitReached = (poolId: string, count: number, limit: number): ArmError =>
  badRequest(
    "LoadBalancerBackendAddressPoolSizeLimitReached",
    `Backend address pool ${poolId} has ${count} backend addresses; a pool cannot have more than ${limit}.`,
  );

/**
 * ARM's code for too many backend IP configurations behind one frontend (every rule counts every address of its
 * pool); the wording is the emulator's, as is the code for the same count over a whole load balancer.
 */
export const backendsPerFrontendLimitReached = (frontendId: string, count: number, limit: number): ArmError =>
  badRequest(
    "LoadBalancerBackendsPerFrontendCountLimitReached",
    `Frontend IP configuration ${frontendId} would reach ${count} backend IP configurations through its rules; ` +
      `a frontend cannot reach more than ${limit}.`,
  );

export const backendsPerLoadBalancerLimitReached = (lbId: string, count: number, limit: number): ArmError =>
  badRequest(
    "LoadBalancerBackendsCountLimitReached",
    `Load balancer ${lbId} would reach ${count} backend IP configurations through its rules; a load balancer ` +
      `cannot reach more than ${limit}.`,
  );

/** ARM returns this, in these words, for a security group with too many rules. */
export const securityRuleCountLimitReached = (limit: number): ArmError =>
  badRequest(
    "SecurityRuleCountLimitReached",
    `A security group cannot have more than ${limit} security rules.`,
  );

/** ARM returns this, in these words, when a security group's rules name too many addresses on one side. */
export const securityRuleAddressesLimitReached = (
  nsgId: string,
  property: "SourceAddressPrefixes" | "DestinationAddressPrefixes",
  count: number,
  limit: number,
): ArmError =>
  badRequest(
    "SecurityRuleAddressesOrPortsPerSecurityGroupLimitReached",
    `Network security group ${nsgId} has ${count} ${property}. A security group cannot have more than ${limit} ` +
      `${property} as per the limit MaxSecurityRuleAddressesOrPortsPerSecurityGroup.`,
  );

/** ARM returns this, in these words, when the subscription has its quota of public IPs in the region. */
export const publicIpCountLimitReached = (limit: number): ArmError =>
  badRequest(
    "PublicIPCountLimitReached",
    `Cannot create more than ${limit} public IP addresses for this subscription in this region.`,
  );
