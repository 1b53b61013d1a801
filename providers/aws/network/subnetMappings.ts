// Static NLB addresses (`eip-allocations`, `private-ipv4-addresses`, `ipv6-addresses`) become SubnetMappings,
// validated by the AWS Load Balancer Controller's rules: the right scheme or address type, as many as there are
// subnets, each address inside exactly one subnet's CIDR. An NLB's addresses cannot change in place, so they are
// part of its name: a change makes a new NLB, make-before-break, as a scheme change does. Pure.
import { createHash } from "node:crypto";
import { ConfigurationError } from "../../errors.ts";
import { parseIP } from "../../../shared/address.ts";
import { parseRangeEntry } from "../../../shared/range.ts";
import type { AwsServiceSettings } from "../annotations/settings.ts";
import type { Network } from "../model.ts";
import type { SubnetMapping } from "../model.ts";
import { AWS_ANNOTATIONS as M } from "../annotations/settings.ts";

const field = (annotation: string) => `metadata.annotations[${annotation}]`;
const refuse = (annotation: string, problem: string, fix: string): never => {
  throw new ConfigurationError("InvalidAnnotation", field(annotation), problem, fix);
};

export function desiredSubnetMappings(
  settings: AwsServiceSettings,
  network: Network,
): SubnetMapping[] | undefined {
  const { eipAllocations: eips, privateIPv4Addresses: v4, ipv6Addresses: v6 } = settings;
  if (!eips.length && !v4.length && !v6.length) return undefined;
  const subnets = network.subnets; // sorted by ID: the n-th allocation goes to the n-th subnet
  const count = (annotation: string, n: number) => {
    if (n !== subnets.length)
      refuse(
        annotation,
        `${n} given for ${subnets.length} subnets (${subnets.join(", ")})`,
        "give exactly one per subnet, or name the subnets with the subnets annotation",
      );
  };
  // (Their scheme and address type are checked with the other combinations.)
  if (eips.length) count(M.eipAllocations, eips.length);
  if (v4.length) count(M.privateIPv4Addresses, v4.length);
  if (v6.length) count(M.ipv6Addresses, v6.length);
  const v4By = placeAddresses(M.privateIPv4Addresses, v4, "IPv4", subnets, network);
  const v6By = placeAddresses(M.ipv6Addresses, v6, "IPv6", subnets, network);
  return subnets.map((subnetId, i) => ({
    subnetId,
    ...(eips.length ? { allocationId: eips[i]! } : {}),
    ...(v4By.has(subnetId) ? { privateIPv4Address: v4By.get(subnetId)! } : {}),
    ...(v6By.has(subnetId) ? { ipv6Address: v6By.get(subnetId)! } : {}),
  }));
}

/** Each address to the one subnet whose CIDR holds it; every subnet gets exactly one. */
function placeAddresses(
  annotation: string,
  addresses: string[],
  family: "IPv4" | "IPv6",
  subnets: string[],
  network: Network,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const text of addresses) {
    const ip = parseIP(text);
    if (!ip.ok || ip.value.family !== family)
      refuse(annotation, `"${text}" is not an ${family} address`, `give ${family} addresses`);
    const address = (ip as { value: { value: bigint; text: string } }).value;
    const inSubnet = subnets.filter((s) =>
      (family === "IPv4" ? network.cidrs?.[s]?.ipv4 : network.cidrs?.[s]?.ipv6)?.some((cidr) => {
        const range = parseRangeEntry(cidr);
        return (
          range.ok &&
          range.value.family === family &&
          range.value.first <= address.value &&
          address.value <= range.value.last
        );
      }),
    );
    if (inSubnet.length !== 1)
      refuse(
        annotation,
        `${text} is in none of the NLB's subnets (${subnets.join(", ")})`,
        "give one address from each subnet's CIDR",
      );
    if (out.has(inSubnet[0]!))
      refuse(annotation, `two addresses are in subnet ${inSubnet[0]}`, "give exactly one address per subnet");
    out.set(inSubnet[0]!, address.text);
  }
  return out;
}

/**
 * What of an NLB cannot change in place besides its scheme: whether it has a security group at all, and its
 * static addresses. Empty for the common case, so existing NLBs keep their names.
 */
export function immutableVariant(
  settings: AwsServiceSettings,
  mappings: SubnetMapping[] | undefined,
): string {
  const parts = [
    ...(settings.disableNlbSg ? ["no-security-group"] : []),
    ...(mappings ?? []).map(
      (m) => `${m.subnetId}=${m.allocationId ?? ""}/${m.privateIPv4Address ?? ""}/${m.ipv6Address ?? ""}`,
    ),
  ];
  return parts.length ? createHash("sha256").update(parts.join(",")).digest("hex").slice(0, 16) : "";
}
