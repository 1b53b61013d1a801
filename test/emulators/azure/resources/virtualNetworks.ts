// Microsoft.Network/virtualNetworks and their subnets. Tests seed them with PUT; load balancer frontends and
// IP-based backend addresses reference them. A subnet in use by a frontend cannot be deleted or dropped.
import type { BodyObject, Json } from "../body.ts";
import { assertValidName, childId, parseNetworkId, sameId } from "../ids.ts";
import { contains, overlaps, parsePrefix } from "../ipam.ts";
import type { Prefix } from "../ipam.ts";
import type { Context, ResourceKind } from "../kinds.ts";
import { compact, ref, renderChild, renderEnvelope } from "../kinds.ts";
import type { Subnet, VirtualNetwork, VirtualNetworkProperties } from "../model.ts";
import {
  duplicateChildName,
  invalidAddressPrefix,
  invalidResourceReference,
  inUseSubnetCannotBeDeleted,
  missingRequiredProperty,
  subnetOutsideVnet,
  subnetsOverlap,
} from "../networkErrors.ts";
import type { Store } from "../store.ts";
import { assertReferenceProvisioned, frontendsInSubnet } from "../references.ts";

export function parseSubnet(b: BodyObject, name?: string): Subnet {
  const subnetName = name ?? b.string("name");
  if (!subnetName) throw missingRequiredProperty("name", b.path || "the request body");
  assertValidName(subnetName);
  const p = b.properties();
  const single = p.string("addressPrefix");
  const many = p.strings("addressPrefixes");
  const subnet: Subnet = {
    name: subnetName,
    addressPrefixes: many ?? (single ? [single] : []),
    singlePrefix: !many,
    privateEndpointNetworkPolicies:
      p.enumValue(
        "privateEndpointNetworkPolicies",
        ["Enabled", "Disabled", "NetworkSecurityGroupEnabled", "RouteTableEnabled"],
        "VirtualNetworkPrivateEndpointNetworkPolicies",
      ) ?? "Disabled",
    privateLinkServiceNetworkPolicies:
      p.enumValue(
        "privateLinkServiceNetworkPolicies",
        ["Enabled", "Disabled"],
        "VirtualNetworkPrivateLinkServiceNetworkPolicies",
      ) ?? "Enabled",
  };
  const nsg = p.reference("networkSecurityGroup");
  if (nsg) subnet.networkSecurityGroupId = nsg;
  return subnet;
}

function parse(body: BodyObject): { properties: VirtualNetworkProperties } {
  const p = body.properties();
  return {
    properties: {
      addressPrefixes: p.object("addressSpace")?.strings("addressPrefixes") ?? [],
      subnets: (p.array("subnets") ?? []).map((s) => parseSubnet(s)),
    },
  };
}

/** The virtual network and subnet a subnet ID names, if both exist. */
export function findSubnet(
  store: Store,
  subnetId: string,
): { vnet: VirtualNetwork; subnet: Subnet } | undefined {
  const parsed = parseNetworkId(subnetId);
  if (!parsed || parsed.type !== "virtualNetworks" || parsed.child?.type.toLowerCase() !== "subnets")
    return undefined;
  const vnet = store.getOfType(parsed.parentId, "virtualNetworks");
  const subnet = vnet?.properties.subnets.find(
    (s) => s.name.toLowerCase() === parsed.child!.name.toLowerCase(),
  );
  return vnet && subnet ? { vnet, subnet } : undefined;
}

function admit(candidate: VirtualNetwork, existing: VirtualNetwork | undefined, ctx: Context): void {
  const p = candidate.properties;
  if (!p.addressPrefixes.length) throw missingRequiredProperty("addressSpace.addressPrefixes", candidate.id);
  const space = p.addressPrefixes.map((text) => parsePrefix(text) ?? fail(invalidAddressPrefix(text)));
  const seen: { name: string; prefix: Prefix }[] = [];
  for (const subnet of p.subnets) {
    const sid = childId(candidate.id, "subnets", subnet.name);
    if (seen.some((s) => s.name.toLowerCase() === subnet.name.toLowerCase()))
      throw duplicateChildName(candidate.id, "subnets", subnet.name);
    if (!subnet.addressPrefixes.length) throw missingRequiredProperty("addressPrefix", sid);
    for (const text of subnet.addressPrefixes) {
      const prefix = parsePrefix(text) ?? fail(invalidAddressPrefix(text));
      if (!space.some((s) => contains(s, prefix))) throw subnetOutsideVnet(subnet.name, candidate.name);
      if (seen.some((s) => overlaps(s.prefix, prefix))) throw subnetsOverlap(subnet.name, candidate.name);
      seen.push({ name: subnet.name, prefix });
    }
    if (subnet.networkSecurityGroupId) {
      const nsg = ctx.store.getOfType(subnet.networkSecurityGroupId, "networkSecurityGroups");
      if (!nsg || nsg.location !== candidate.location)
        throw invalidResourceReference(subnet.networkSecurityGroupId, sid);
      assertReferenceProvisioned(nsg, candidate.id, ctx.config.retryAfterSeconds);
    }
  }
  for (const old of existing?.properties.subnets ?? []) {
    if (p.subnets.some((s) => s.name.toLowerCase() === old.name.toLowerCase())) continue;
    const user = frontendsInSubnet(ctx.store, childId(candidate.id, "subnets", old.name))[0];
    if (user) throw inUseSubnetCannotBeDeleted(old.name, user.frontendId);
  }
}

function fail(err: Error): never {
  throw err;
}

export function renderSubnet(vnet: VirtualNetwork, subnet: Subnet, ctx: Context): Json {
  const sid = childId(vnet.id, "subnets", subnet.name);
  const users = frontendsInSubnet(ctx.store, sid).map((u) => ({ id: u.frontendId }));
  return renderChild(
    vnet,
    "subnets",
    subnet.name,
    compact({
      addressPrefix: subnet.singlePrefix ? subnet.addressPrefixes[0] : undefined,
      addressPrefixes: subnet.singlePrefix ? undefined : subnet.addressPrefixes,
      networkSecurityGroup: ref(subnet.networkSecurityGroupId),
      ipConfigurations: users.length ? users : undefined,
      delegations: [],
      privateEndpointNetworkPolicies: subnet.privateEndpointNetworkPolicies,
      privateLinkServiceNetworkPolicies: subnet.privateLinkServiceNetworkPolicies,
    }),
  );
}

export const virtualNetworks: ResourceKind<VirtualNetwork> = {
  type: "virtualNetworks",
  operationNoun: "VirtualNetwork",
  parse,
  admit,
  render: (vnet, ctx) =>
    renderEnvelope(vnet, {
      addressSpace: { addressPrefixes: vnet.properties.addressPrefixes },
      subnets: vnet.properties.subnets.map((s) => renderSubnet(vnet, s, ctx)),
      virtualNetworkPeerings: [],
      enableDdosProtection: false,
    }),
  checkDelete(vnet, ctx) {
    for (const subnet of vnet.properties.subnets) {
      const user = frontendsInSubnet(ctx.store, childId(vnet.id, "subnets", subnet.name))[0];
      if (user) throw inUseSubnetCannotBeDeleted(subnet.name, user.frontendId);
    }
  },
  children: {
    subnets: {
      segment: "subnets",
      upsert(parent, name, body) {
        const subnet = parseSubnet(body, name);
        const current = parent.properties.subnets;
        const exists = current.some((s) => sameId(s.name, name));
        const subnets = exists
          ? current.map((s) => (sameId(s.name, name) ? subnet : s))
          : [...current, subnet];
        return { ...parent.properties, subnets };
      },
      remove: (parent, name) => ({
        ...parent.properties,
        subnets: parent.properties.subnets.filter((s) => !sameId(s.name, name)),
      }),
    },
  },
};
