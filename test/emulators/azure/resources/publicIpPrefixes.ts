// Microsoft.Network/publicIPPrefixes: a contiguous block of public addresses (/28 to /31, or /124 to /127) that
// public IPs are allocated from. The block is assigned when the prefix is provisioned; its length and version are
// fixed; it cannot be deleted while public IPs take their addresses from it.
import type { BodyObject } from "../body.ts";
import { sameId } from "../ids.ts";
import { bigIntToIp, parsePrefix } from "../ipam.ts";
import type { Context, ResourceKind } from "../kinds.ts";
import { compact, renderEnvelope } from "../kinds.ts";
import type { PublicIpAddress, PublicIpPrefix, PublicIpPrefixProperties, Sku } from "../model.ts";
import {
  invalidPublicIpPrefixLength,
  publicIpPrefixCannotBeModified,
  publicIpPrefixInUse,
} from "../publicIpErrors.ts";

function parse(body: BodyObject): { properties: PublicIpPrefixProperties; sku: Sku } {
  const p = body.properties();
  const sku = body.object("sku");
  return {
    properties: {
      prefixLength: p.integer("prefixLength") ?? 0,
      publicIPAddressVersion: p.enumValue("publicIPAddressVersion", ["IPv4", "IPv6"], "IPVersion") ?? "IPv4",
      ipTags: (p.array("ipTags") ?? []).map((t) => ({
        ipTagType: t.string("ipTagType") ?? "",
        tag: t.string("tag") ?? "",
      })),
    },
    sku: {
      name: sku?.enumValue("name", ["Standard"], "PublicIPPrefixSkuName") ?? "Standard",
      tier: sku?.enumValue("tier", ["Regional", "Global"], "PublicIPPrefixSkuTier") ?? "Regional",
    },
  };
}

function admit(candidate: PublicIpPrefix, existing: PublicIpPrefix | undefined): void {
  const p = candidate.properties;
  const [min, max] = p.publicIPAddressVersion === "IPv4" ? [28, 31] : [124, 127];
  if (p.prefixLength < min || p.prefixLength > max)
    throw invalidPublicIpPrefixLength(candidate.id, p.prefixLength);
  if (!existing) return;
  if (existing.properties.prefixLength !== p.prefixLength)
    throw publicIpPrefixCannotBeModified(candidate.id, "prefix length");
  if (existing.properties.publicIPAddressVersion !== p.publicIPAddressVersion)
    throw publicIpPrefixCannotBeModified(candidate.id, "IP version");
  // The block belongs to the resource, not to the request.
  if (existing.properties.ipPrefix) p.ipPrefix = existing.properties.ipPrefix;
}

/** The public IPs whose addresses come from the prefix. */
export const publicIpsFromPrefix = (ctx: Context, prefixId: string): PublicIpAddress[] =>
  ctx.store.ofType("publicIPAddresses").filter((pip) => sameId(pip.properties.publicIPPrefixId, prefixId));

/** How many addresses the prefix holds. */
export function prefixSize(prefix: PublicIpPrefix): number {
  const bits = prefix.properties.publicIPAddressVersion === "IPv4" ? 32 : 128;
  return 2 ** (bits - prefix.properties.prefixLength);
}

/** The lowest address of the prefix no public IP has, or undefined when the prefix is full or not yet assigned. */
export function freeAddressIn(prefix: PublicIpPrefix, ctx: Context): string | undefined {
  const range = prefix.properties.ipPrefix ? parsePrefix(prefix.properties.ipPrefix) : undefined;
  if (!range) return undefined;
  const used = new Set(publicIpsFromPrefix(ctx, prefix.id).map((pip) => pip.properties.ipAddress));
  for (let v = range.first; v <= range.last; v++) {
    const ip = bigIntToIp(v, range.version);
    if (!used.has(ip)) return ip;
  }
  return undefined;
}

function render(r: PublicIpPrefix, ctx: Context): Record<string, unknown> {
  const p = r.properties;
  const users = publicIpsFromPrefix(ctx, r.id).map((pip) => ({ id: pip.id }));
  return renderEnvelope(
    r,
    compact({
      prefixLength: p.prefixLength,
      publicIPAddressVersion: p.publicIPAddressVersion,
      ipPrefix: p.ipPrefix,
      ipTags: p.ipTags,
      publicIPAddresses: users.length ? users : undefined,
    }),
  );
}

export const publicIpPrefixes: ResourceKind<PublicIpPrefix> = {
  type: "publicIPPrefixes",
  operationNoun: "PublicIpPrefix",
  parse,
  admit: (candidate, existing) => admit(candidate, existing),
  render,
  onProvisioned(r, ctx) {
    if (!r.properties.ipPrefix)
      r.properties.ipPrefix = ctx.store.allocatePublicPrefix(
        r.properties.publicIPAddressVersion,
        r.properties.prefixLength,
      );
  },
  checkDelete(r, ctx) {
    const users = publicIpsFromPrefix(ctx, r.id).map((pip) => pip.id);
    if (users.length) throw publicIpPrefixInUse(r.id, users);
  },
  children: {},
};
