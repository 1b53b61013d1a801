// Microsoft.Network/publicIPAddresses. A Static address is assigned when the create completes (the PUT response
// has none yet); a Dynamic one only while a provisioned frontend uses it. An address in use cannot be deleted, and
// its SKU, allocation method and IP version cannot change, nor its IP tags at all. A DNS label is one record per
// region (`<label>.<region>.cloudapp.azure.com`). The subscription has a quota of public IPs per region.
import type { BodyObject } from "../body.ts";
import type { Context, ResourceKind } from "../kinds.ts";
import { compact, ref, renderEnvelope } from "../kinds.ts";
import { limitFor } from "../limits.ts";
import type { PublicIpAddress, PublicIpProperties, Sku } from "../model.ts";
import {
  publicIpCannotBeDeleted,
  publicIpCountLimitReached,
  publicIpIdleTimeoutOutOfRange,
  publicIpInUseCannotUpdate,
  standardSkuPublicIpMustBeStatic,
} from "../networkErrors.ts";
import { invalidResourceReference } from "../networkErrors.ts";
import {
  dnsRecordInUse,
  invalidDomainNameLabel,
  ipTagsCannotBeModified,
  publicIpPrefixCannotBeModified,
  publicIpPrefixMismatch,
  publicIpPrefixOutOfIpAddresses,
} from "../publicIpErrors.ts";
import { assertReferenceProvisioned, frontendsUsingPublicIp } from "../references.ts";
import { freeAddressIn, prefixSize, publicIpsFromPrefix } from "./publicIpPrefixes.ts";

const DNS_LABEL = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;
const ipTagKey = (tags: { ipTagType: string; tag: string }[]): string =>
  JSON.stringify(tags.map((t) => [t.ipTagType.toLowerCase(), t.tag]).sort());

/**
 * A public IP from a prefix: the prefix exists in the region, matches it (Standard, Static, same version), has a
 * free address for a new public IP, and stays the public IP's prefix for good.
 */
function admitPrefix(candidate: PublicIpAddress, existing: PublicIpAddress | undefined, ctx: Context): void {
  const prefixId = candidate.properties.publicIPPrefixId;
  if (existing && !sameIdOrBothUnset(existing.properties.publicIPPrefixId, prefixId))
    throw publicIpPrefixCannotBeModified(candidate.id, "public IP prefix");
  if (!prefixId) return;
  const prefix = ctx.store.getOfType(prefixId, "publicIPPrefixes");
  if (!prefix || prefix.location !== candidate.location)
    throw invalidResourceReference(prefixId, candidate.id);
  assertReferenceProvisioned(prefix, candidate.id, ctx.config.retryAfterSeconds);
  if (candidate.sku?.name !== "Standard")
    throw publicIpPrefixMismatch(candidate.id, prefixId, "only a Standard public IP can be");
  if (candidate.properties.publicIPAddressVersion !== prefix.properties.publicIPAddressVersion)
    throw publicIpPrefixMismatch(
      candidate.id,
      prefixId,
      `the prefix is ${prefix.properties.publicIPAddressVersion}`,
    );
  // Counted on accepting the write (the address itself comes when the create completes), so that two creates
  // cannot both count on the last free address.
  if (!existing && publicIpsFromPrefix(ctx, prefixId).length >= prefixSize(prefix))
    throw publicIpPrefixOutOfIpAddresses(prefixId, prefixSize(prefix));
}

const sameIdOrBothUnset = (a: string | undefined, b: string | undefined): boolean =>
  a === undefined ? b === undefined : b !== undefined && a.toLowerCase() === b.toLowerCase();

/** The FQDN `<label>.<region>.cloudapp.azure.com` is one DNS record per region, whoever owns the public IP. */
function admitDnsLabel(candidate: PublicIpAddress, ctx: Context): void {
  const label = candidate.properties.domainNameLabel;
  if (!label) return;
  if (!DNS_LABEL.test(label)) throw invalidDomainNameLabel(label);
  const taken = ctx.store
    .ofType("publicIPAddresses")
    .some(
      (r) =>
        r.id.toLowerCase() !== candidate.id.toLowerCase() &&
        r.location === candidate.location &&
        r.properties.domainNameLabel?.toLowerCase() === label.toLowerCase(),
    );
  if (taken) throw dnsRecordInUse(label, candidate.location);
}

const SKU_NAMES = ["Basic", "Standard"] as const;
const SKU_TIERS = ["Regional", "Global"] as const;

function parseSku(body: BodyObject): Sku {
  const sku = body.object("sku");
  return {
    // The API's default SKU for a public IP is Basic.
    name: sku?.enumValue("name", SKU_NAMES, "PublicIPAddressSkuName") ?? "Basic",
    tier: sku?.enumValue("tier", SKU_TIERS, "PublicIPAddressSkuTier") ?? "Regional",
  };
}

function parse(body: BodyObject): { properties: PublicIpProperties; sku: Sku; zones?: string[] } {
  const p = body.properties();
  const properties: PublicIpProperties = {
    publicIPAllocationMethod:
      p.enumValue("publicIPAllocationMethod", ["Static", "Dynamic"], "IPAllocationMethod") ?? "Dynamic",
    publicIPAddressVersion: p.enumValue("publicIPAddressVersion", ["IPv4", "IPv6"], "IPVersion") ?? "IPv4",
    idleTimeoutInMinutes: p.integer("idleTimeoutInMinutes") ?? 4,
    ipTags: (p.array("ipTags") ?? []).map((t) => ({
      ipTagType: t.string("ipTagType") ?? "",
      tag: t.string("tag") ?? "",
    })),
  };
  const label = p.object("dnsSettings")?.string("domainNameLabel");
  if (label) properties.domainNameLabel = label;
  const prefix = p.reference("publicIPPrefix");
  if (prefix) properties.publicIPPrefixId = prefix;
  const zones = body.strings("zones");
  return zones ? { properties, sku: parseSku(body), zones } : { properties, sku: parseSku(body) };
}

function admit(candidate: PublicIpAddress, existing: PublicIpAddress | undefined, ctx: Context): void {
  const p = candidate.properties;
  if (candidate.sku?.name === "Standard" && p.publicIPAllocationMethod !== "Static")
    throw standardSkuPublicIpMustBeStatic(candidate.id);
  if (p.idleTimeoutInMinutes < 4 || p.idleTimeoutInMinutes > 30)
    throw publicIpIdleTimeoutOutOfRange(candidate.id);
  admitDnsLabel(candidate, ctx);
  admitPrefix(candidate, existing, ctx);
  if (existing && ipTagKey(existing.properties.ipTags) !== ipTagKey(p.ipTags))
    throw ipTagsCannotBeModified(candidate.id);
  if (!existing) {
    const quota = limitFor(ctx.config.limits, "publicIpAddressesPerRegion");
    const inRegion = ctx.store.ofType("publicIPAddresses").filter((r) => r.location === candidate.location);
    if (quota !== undefined && inRegion.length >= quota) throw publicIpCountLimitReached(quota);
    return;
  }
  const users = frontendsUsingPublicIp(ctx.store, candidate.id);
  const changed =
    existing.sku?.name !== candidate.sku?.name ||
    existing.properties.publicIPAllocationMethod !== p.publicIPAllocationMethod ||
    existing.properties.publicIPAddressVersion !== p.publicIPAddressVersion;
  if (changed && users.length) throw publicIpInUseCannotUpdate(candidate.id, users[0]!.frontendId);
  // The address belongs to the resource, not to the request: an update keeps it.
  if (
    existing.properties.ipAddress &&
    existing.properties.publicIPAddressVersion === p.publicIPAddressVersion
  )
    p.ipAddress = existing.properties.ipAddress;
}

function render(r: PublicIpAddress, ctx: Context): Record<string, unknown> {
  const p = r.properties;
  const user = frontendsUsingPublicIp(ctx.store, r.id)[0];
  return renderEnvelope(
    r,
    compact({
      ipAddress: p.ipAddress,
      publicIPAddressVersion: p.publicIPAddressVersion,
      publicIPAllocationMethod: p.publicIPAllocationMethod,
      idleTimeoutInMinutes: p.idleTimeoutInMinutes,
      dnsSettings: p.domainNameLabel
        ? {
            domainNameLabel: p.domainNameLabel,
            fqdn: `${p.domainNameLabel}.${r.location}.cloudapp.azure.com`,
          }
        : undefined,
      ipTags: p.ipTags,
      ipConfiguration: ref(user?.frontendId),
      publicIPPrefix: ref(p.publicIPPrefixId),
      ddosSettings: { protectionMode: "VirtualNetworkInherited" },
    }),
  );
}

/**
 * Static addresses are assigned once the public IP is provisioned. A Dynamic one is assigned when a provisioned
 * frontend first uses it and released only when no frontend references it any more, so that updating the load
 * balancer does not take the address away.
 */
export function reconcilePublicAddresses(ctx: Context): void {
  for (const pip of ctx.store.ofType("publicIPAddresses")) {
    const p = pip.properties;
    if (pip.provisioningState === "Updating") continue;
    // A Static one needs no look at its users, which for every public IP on every provisioning was most of a
    // write's cost at 1000 public IPs.
    if (p.publicIPAllocationMethod === "Static") {
      if (!p.ipAddress) p.ipAddress = newAddress(pip, ctx);
      continue;
    }
    const users = frontendsUsingPublicIp(ctx.store, pip.id);
    const assign = users.some((u) => u.lb.provisioningState === "Succeeded");
    if (assign && !p.ipAddress) p.ipAddress = newAddress(pip, ctx);
    if (p.publicIPAllocationMethod === "Dynamic" && p.ipAddress && users.length === 0) {
      ctx.store.releasePublicAddress(p.ipAddress);
      delete p.ipAddress;
    }
  }
}

function newAddress(pip: PublicIpAddress, ctx: Context): string | undefined {
  const prefixId = pip.properties.publicIPPrefixId;
  if (!prefixId) return ctx.store.allocatePublicAddress(pip.properties.publicIPAddressVersion);
  const prefix = ctx.store.getOfType(prefixId, "publicIPPrefixes");
  return prefix ? freeAddressIn(prefix, ctx) : undefined;
}

export const publicIpAddresses: ResourceKind<PublicIpAddress> = {
  type: "publicIPAddresses",
  operationNoun: "PublicIpAddress",
  parse,
  admit,
  render,
  onProvisioned: (_r, ctx) => reconcilePublicAddresses(ctx),
  onDeleted: (r, ctx) => {
    // An address from a prefix goes back to the prefix (it is free once no public IP has it).
    if (r.properties.ipAddress && !r.properties.publicIPPrefixId)
      ctx.store.releasePublicAddress(r.properties.ipAddress);
  },
  checkDelete(r, ctx) {
    const user = frontendsUsingPublicIp(ctx.store, r.id)[0];
    if (user) throw publicIpCannotBeDeleted(r.id, user.frontendId);
  },
  children: {},
};
