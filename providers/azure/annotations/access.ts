// Who may reach a Service, as cloud-provider-azure's annotations say it: allowed IP ranges and service tags (allow
// rules in the cluster's network security group), a deny rule for everyone else inside the virtual network, or
// no security rules at all. Parsed and checked against each other here; the rules are built in ../security/rules.ts.
import { AZURE_ANNOTATION_KEYS } from "./catalog.ts";
import { Address4, Address6 } from "ip-address";
import {
  invalidAnnotation as fail,
  optionalBool as bool,
  splitList as list,
} from "../../annotationValues.ts";
import { hostBits } from "../../../shared/range.ts";

export interface AccessSettings {
  allowedServiceTags: string[];
  /** CIDRs of `azure-allowed-ip-ranges`, as written (IPv4 and IPv6). */
  allowedIpRanges: string[];
  /** A Deny rule below the allow rules for every other source, the virtual network's included. */
  denyAllExceptSourceRanges: boolean;
  /** No security rules for the Service: the user manages the security group for it. */
  disableSecurityRules: boolean;
}

export function parseAccessSettings(get: (key: string) => string | undefined): AccessSettings {
  const a = AZURE_ANNOTATION_KEYS;
  const settings: AccessSettings = {
    allowedServiceTags: list(get(a.allowedServiceTags)),
    allowedIpRanges: list(get(a.allowedIpRanges)),
    denyAllExceptSourceRanges: bool(a.denyAllExceptSourceRanges, get(a.denyAllExceptSourceRanges)) ?? false,
    disableSecurityRules: bool(a.disableSecurityRules, get(a.disableSecurityRules)) ?? false,
  };
  for (const tag of settings.allowedServiceTags)
    if (!/^[A-Za-z][A-Za-z0-9.]*$/.test(tag))
      fail(
        a.allowedServiceTags,
        `"${tag}" is not a service tag`,
        'list tags such as "AzureFrontDoor.Backend"',
      );
  // cloud-provider-azure only warns about a range it cannot read and then denies everything; Portico refuses
  // the Service instead, so that a typo is seen before the Service is exposed or cut off.
  for (const range of settings.allowedIpRanges) {
    if (!range.includes("/") || !(Address4.isValid(range) || Address6.isValid(range)))
      fail(a.allowedIpRanges, `"${range}" is not a CIDR`, 'write CIDRs such as "203.0.113.0/24"');
    // As for spec.loadBalancerSourceRanges: 10.0.0.1/8 may mean the network or the one address.
    const host = hostBits(range);
    if (host)
      fail(
        a.allowedIpRanges,
        `"${range}" has host bits set`,
        `write ${host.network} for the network, or ${host.single} for the one address`,
      );
  }
  return settings;
}

/**
 * Checks the access annotations against the Service's source ranges (spec.loadBalancerSourceRanges or the
 * load-balancer-source-ranges annotation) and against each other, as cloud-provider-azure's access control
 * does where it refuses, and where it would silently drop a setting.
 */
export function assertAccessCoherent(
  settings: AccessSettings,
  sourceRanges: string[],
  /** Where the source ranges are written: the spec, or Kubernetes' annotation. */
  sourceRangesField = "spec.loadBalancerSourceRanges",
): void {
  const a = AZURE_ANNOTATION_KEYS;
  // cloud-provider-azure refuses both at once ("cannot set both spec.LoadBalancerSourceRanges and service
  // annotation azure-allowed-ip-ranges"); which one wins would be a guess.
  if (settings.allowedIpRanges.length && sourceRanges.length)
    fail(
      a.allowedIpRanges,
      "is set together with spec.loadBalancerSourceRanges (or the load-balancer-source-ranges annotation)",
      "list the ranges in one place only",
    );
  const ranges = settings.allowedIpRanges.length + sourceRanges.length;
  if (settings.denyAllExceptSourceRanges && !ranges)
    fail(
      a.denyAllExceptSourceRanges,
      "has nothing to keep open: no spec.loadBalancerSourceRanges and no azure-allowed-ip-ranges",
      "list the allowed ranges, or remove the annotation",
    );
  if (settings.disableSecurityRules) {
    const other = settings.allowedServiceTags.length
      ? a.allowedServiceTags
      : settings.allowedIpRanges.length
        ? a.allowedIpRanges
        : sourceRanges.length
          ? sourceRangesField
          : settings.denyAllExceptSourceRanges
            ? a.denyAllExceptSourceRanges
            : undefined;
    if (other)
      fail(
        a.disableSecurityRules,
        `turns the Service's security rules off, so ${other} could not be enforced`,
        `remove one of the two; with the rules off, restrict access in the security group yourself`,
      );
  }
}
