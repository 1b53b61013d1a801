// Which IP families a Service's frontends have, and the settings each family's side reads (the `-ipv6`
// annotations stand for the IPv6 side where the unsuffixed ones stand for the IPv4 side). Pure.
import { ConfigurationError } from "../../errors.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import type { AzureServiceSettings } from "./settings.ts";
import { AZURE_ANNOTATION_KEYS } from "./catalog.ts";
import type { IpFamily } from "../names.ts";

/**
 * The families the Service's frontends have: spec.ipFamilies as the apiserver resolved them from ipFamilyPolicy
 * (PreferDualStack in a dual-stack cluster, RequireDualStack: both; SingleStack: one). The first is primary.
 * An `-ipv6` annotation on a Service without IPv6 asks for something it would not get, and is refused.
 */
export function frontendFamilies(intent: LoadBalancerIntent, settings: AzureServiceSettings): IpFamily[] {
  const families = [...new Set(intent.ipFamilies)];
  if (!families.length) families.push("IPv4");
  const v6 = settings.ipv6;
  const field = v6.requestedAddress
    ? v6.requestedAddress.field
    : v6.publicIpName
      ? `metadata.annotations[${AZURE_ANNOTATION_KEYS.pipNameIpv6}]`
      : v6.publicIpPrefixId
        ? `metadata.annotations[${AZURE_ANNOTATION_KEYS.pipPrefixIdIpv6}]`
        : undefined;
  if (field && !families.includes("IPv6"))
    throw new ConfigurationError(
      "IPv6NotRequested",
      field,
      "names the IPv6 frontend, but the Service's spec.ipFamilies has no IPv6",
      "add IPv6 to spec.ipFamilies (ipFamilyPolicy PreferDualStack or RequireDualStack), or remove the annotation",
    );
  const v4Named = settings.requestedAddress ?? undefined;
  if (v4Named && !families.includes("IPv4"))
    throw new ConfigurationError(
      "IPv4NotRequested",
      v4Named.field,
      "asks for an IPv4 address, but the Service is IPv6-only",
      `ask for the IPv6 address with ${AZURE_ANNOTATION_KEYS.ipv6}, or add IPv4 to spec.ipFamilies`,
    );
  return families;
}

/**
 * The settings one family's side reads: for IPv6, the `-ipv6` annotations stand where the IPv4 ones are. The DNS
 * label goes to the primary family's public IP only: ARM gives a label to one public IP of the region.
 */
export function settingsForFamily(
  settings: AzureServiceSettings,
  family: IpFamily,
  primary: IpFamily,
): AzureServiceSettings {
  const { requestedAddress: _a, publicIpName: _n, publicIpPrefixId: _p, dnsLabel: _d, ...rest } = settings;
  const own =
    family === "IPv4"
      ? {
          ...(settings.requestedAddress ? { requestedAddress: settings.requestedAddress } : {}),
          ...(settings.publicIpName ? { publicIpName: settings.publicIpName } : {}),
          ...(settings.publicIpPrefixId ? { publicIpPrefixId: settings.publicIpPrefixId } : {}),
        }
      : settings.ipv6;
  return {
    ...rest,
    ...own,
    ...(settings.dnsLabel && family === primary ? { dnsLabel: settings.dnsLabel } : {}),
  };
}
