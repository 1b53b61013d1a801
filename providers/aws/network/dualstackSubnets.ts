// A dualstack NLB takes an IPv6 address in each of its subnets, so ELBv2 requires an IPv6 CIDR block on every one:
// refused before the first write, naming the annotation and the subnets, whether the Service named them or they
// were found by their role tags (subnets.ts reads their CIDRs either way). Pure.
import { ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS as M, type AwsServiceSettings } from "../annotations/settings.ts";
import type { Network } from "../model.ts";

export function checkDualstackSubnets(settings: AwsServiceSettings, network: Network): void {
  // Unknown CIDRs (a network not read from EC2) say nothing either way.
  if (settings.ipAddressType !== "dualstack" || !network.cidrs) return;
  const without = network.subnets.filter((s) => !network.cidrs?.[s]?.ipv6.length);
  if (!without.length) return;
  const role = settings.scheme === "internal" ? "kubernetes.io/role/internal-elb" : "kubernetes.io/role/elb";
  const how = settings.subnets.length ? `named in ${M.subnets}` : `found by their ${role} tag`;
  const one = without.length === 1;
  throw new ConfigurationError(
    "SubnetsWithoutIPv6",
    `metadata.annotations[${M.ipAddressType}]`,
    `a dualstack NLB needs an IPv6 CIDR block on each of its subnets, and ${one ? "subnet" : "subnets"} ${without.join(", ")} (${how}) ${one ? "has" : "have"} none`,
    `associate an IPv6 CIDR block with ${one ? "it" : "them"}, name subnets that have one in ${M.subnets}, or set ${M.ipAddressType}: ipv4`,
  );
}
