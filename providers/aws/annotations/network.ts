// The annotations for what admits traffic to the NLB and its targets, and for its fixed addresses, parsed as the
// AWS Load Balancer Controller reads them: security groups (Portico's own or the user's, or none), the rules on the
// targets' groups, managed prefix lists, PrivateLink traffic, and Elastic IPs or private addresses per subnet.
import { invalidAnnotation as fail, oneOf, optionalBool, splitList as list } from "../../annotationValues.ts";
import { AWS_ANNOTATION_KEYS as a } from "./catalog.ts";

export interface NetworkSettings {
  /** Undefined: the default (on with Portico's own group, off with the user's, as the AWS controller does). */
  manageBackendRules?: boolean;
  /** The user's security groups, by ID or name, first the one backend rules refer to. */
  securityGroups: string[];
  disableNlbSg: boolean;
  prefixLists: string[];
  privateLinkInboundRules?: "on" | "off";
  eipAllocations: string[];
  privateIPv4Addresses: string[];
  ipv6Addresses: string[];
}

export function parseNetworkSettings(get: (key: string) => string | undefined): NetworkSettings {
  const settings: NetworkSettings = {
    securityGroups: list(get(a.securityGroups)),
    disableNlbSg: optionalBool(a.disableNlbSg, get(a.disableNlbSg)) ?? false,
    prefixLists: list(get(a.prefixLists)),
    eipAllocations: list(get(a.eipAllocations)),
    privateIPv4Addresses: list(get(a.privateIPv4Addresses)),
    ipv6Addresses: list(get(a.ipv6Addresses)),
  };
  const manage = optionalBool(a.manageBackendRules, get(a.manageBackendRules));
  if (manage !== undefined) settings.manageBackendRules = manage;
  for (const id of settings.prefixLists)
    if (!/^pl-[0-9a-f]+$/.test(id))
      fail(a.prefixLists, `"${id}" is not a prefix list ID`, 'give IDs like "pl-0123abcd"');
  for (const id of settings.eipAllocations)
    if (!/^eipalloc-[0-9a-f]+$/.test(id))
      fail(
        a.eipAllocations,
        `"${id}" is not an Elastic IP allocation ID`,
        'give IDs like "eipalloc-0123abcd"',
      );
  const privateLink = get(a.privateLinkInboundRules);
  if (privateLink)
    settings.privateLinkInboundRules = oneOf(a.privateLinkInboundRules, privateLink, ["on", "off"] as const);
  return settings;
}
