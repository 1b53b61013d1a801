// Which public IP a public Service's frontend uses. Pure: decided from the Service's settings and the public IPs
// observed in the resource group. Portico uses a user's public IP (named by annotation, or found by a
// requested address) as it is and never changes or deletes it; otherwise it makes one of its own, tagged.
import { ConfigurationError } from "../../errors.ts";
import type { ServiceRef } from "../../provider.ts";
import { AZURE_ANNOTATIONS, type AzureServiceSettings } from "../annotations/settings.ts";
import type { AzureConfig } from "../config.ts";
import { nameOf, resourceGroupOf, resourceId } from "../arm/ids.ts";
import type { PublicIPAddress, PublicIpChoice } from "../model.ts";
import {
  frontendName,
  ownershipTags,
  publicIpName,
  sharedLoadBalancerName,
  TAG,
  uidOfFrontend,
  type IpFamily,
} from "../names.ts";
import { sameIpTags, type IpTag } from "../annotations/publicIp.ts";
import { assertRoomToShare } from "./shared.ts";
import {
  CLOUD_PROVIDER_AZURE,
  cpaClaim,
  cpaFrontendNames,
  cpaPublicIpNames,
  DEFAULT_ANCHOR_CLUSTER,
} from "../adoption/cloudProviderAzure.ts";

export function choosePublicIp(
  settings: AzureServiceSettings,
  service: ServiceRef,
  ctx: { cluster: string; config: AzureConfig },
  publicIps: PublicIPAddress[],
  family: IpFamily = "IPv4",
): PublicIpChoice | undefined {
  if (settings.internal) return undefined;
  const rg = settings.publicIpResourceGroup ?? ctx.config.resourceGroup;
  const candidates = publicIps.filter((p) => resourceGroupOf(p.id)?.toLowerCase() === rg.toLowerCase());
  const requested = settings.requestedAddress;
  const named = settings.publicIpName;
  let found: PublicIPAddress | undefined;
  let field: string;
  if (requested) {
    field = requested.field;
    found = candidates.find((p) => p.ipAddress === requested.address);
    if (!found)
      throw new ConfigurationError(
        "PublicIPNotFound",
        field,
        `no public IP in resource group ${rg} has the address ${requested.address}`,
        "create a Standard static public IP with it first (or name its resource group with " +
          `${AZURE_ANNOTATIONS.resourceGroup}), or remove the request`,
      );
    if (named && found.name?.toLowerCase() !== named.toLowerCase())
      throw new ConfigurationError(
        "PublicIPConflict",
        `metadata.annotations[${keys(family).pipName}]`,
        `names ${named}, but ${requested.address} belongs to public IP ${found.name}`,
        "keep only one of the two",
      );
  } else if (named) {
    field = `metadata.annotations[${keys(family).pipName}]`;
    found = candidates.find((p) => p.name?.toLowerCase() === named.toLowerCase());
  } else {
    field = "metadata.uid";
    const name = publicIpName(ctx.cluster, service.uid, family);
    found = candidates.find((p) => p.name?.toLowerCase() === name.toLowerCase());
    if (found && !ownedBy(found, ctx.cluster, service))
      throw new ConfigurationError(
        "PublicIPNameTaken",
        field,
        `a public IP named ${name} exists that Portico did not make for this Service`,
        `name a public IP to use with ${AZURE_ANNOTATIONS.pipName}; Portico never adopts what it did not create`,
      );
    // Taken over from cloud-provider-azure earlier, or to be now: its name is cloud-provider-azure's.
    found ??= candidates.find(
      (p) => ownedBy(p, ctx.cluster, service) && p.tags?.[TAG.adoptedFrom] && familyOf(p) === family,
    );
    const anchor = anchorOf(ctx.config);
    const names = cpaPublicIpNames(anchor, service.uid, family, settings.publicIpPrefixId).map((n) =>
      n.toLowerCase(),
    );
    found ??= candidates.find(
      (p) =>
        names.includes(p.name?.toLowerCase() ?? "") &&
        familyOf(p) === family &&
        cpaClaim(p, `${service.namespace}/${service.name}`, anchor) === "this",
    );
  }
  const name = found?.name ?? named ?? publicIpName(ctx.cluster, service.uid, family);
  const id = found?.id ?? resourceId(ctx.config.subscriptionId, rg, "publicIPAddresses", name);
  const shareable = shareableOn(ctx);
  if (found) assertOfFamily(found, family, field);
  if (found) assertUsable(found, service, field, ctx.cluster, shareable, family);
  const claim = found && cpaClaim(found, `${service.namespace}/${service.name}`, anchorOf(ctx.config));
  if (found && claim === "this" && !found.tags?.[TAG.serviceUid]) {
    // cloud-provider-azure's public IP for this Service: Portico's from now on, with the address it has.
    assertFixedAsMade(found, settings, family);
    return {
      ...managed(settings, service, ctx.cluster, family, { name, resourceGroup: rg, id }),
      adopt: { from: CLOUD_PROVIDER_AZURE, ...(found.ipAddress ? { address: found.ipAddress } : {}) },
    };
  }
  if (found && isSharedPorticoIp(found, ctx.cluster, service)) {
    assertRoomToShare(found, service.uid, field);
    assertUserIpAsAsked(found, settings, family);
    return { kind: "shared", name, resourceGroup: rg, id };
  }
  if (!found || ownedBy(found, ctx.cluster, service)) {
    if (found) assertFixedAsMade(found, settings, family);
    return managed(settings, service, ctx.cluster, family, { name, resourceGroup: rg, id });
  }
  assertUserIpAsAsked(found, settings, family);
  return { kind: "user", name, resourceGroup: rg, id };
}

/** The cluster name cloud-provider-azure tagged its public IPs with. */
const anchorOf = (config: AzureConfig): string =>
  config.cloudProviderAzureClusterName ?? DEFAULT_ANCHOR_CLUSTER;

function managed(
  settings: AzureServiceSettings,
  service: ServiceRef,
  cluster: string,
  family: IpFamily,
  where: { name: string; resourceGroup: string; id: string },
): Extract<PublicIpChoice, { kind: "managed" }> {
  return {
    kind: "managed",
    ...where,
    tags: { ...settings.publicIpTags, ...ownershipTags(cluster, service, "publicip") },
    ...(settings.dnsLabel ? { dnsLabel: settings.dnsLabel } : {}),
    ipTags: settings.ipTags,
    ...(settings.publicIpPrefixId ? { prefixId: settings.publicIpPrefixId } : {}),
    ...(family === "IPv6" ? { version: family } : {}),
  };
}

/** The annotations that name one family's public IP and prefix. */
const keys = (family: IpFamily) =>
  family === "IPv6"
    ? { pipName: AZURE_ANNOTATIONS.pipNameIpv6, pipPrefixId: AZURE_ANNOTATIONS.pipPrefixIdIpv6 }
    : { pipName: AZURE_ANNOTATIONS.pipName, pipPrefixId: AZURE_ANNOTATIONS.pipPrefixId };

const sameOptionalId = (a: string | undefined, b: string | undefined): boolean =>
  (a ?? "").toLowerCase() === (b ?? "").toLowerCase();

/** The DNS label a public IP carries, if any. */
export function dnsLabelOf(pip: PublicIPAddress): string | undefined {
  return pip.dnsSettings?.domainNameLabel || undefined;
}

/** The IP tags a public IP carries, in Portico's form. */
export function ipTagsOf(pip: PublicIPAddress): IpTag[] {
  return (pip.ipTags ?? []).map((t) => ({ ipTagType: t.ipTagType ?? "", tag: t.tag ?? "" }));
}

/**
 * ARM fixes a public IP's IP tags when it is made (RoutingPreference cannot change at all). cloud-provider-azure
 * then deletes the public IP and makes another, so the Service's address changes unasked; Portico refuses and
 * says how to get that on purpose.
 */
function assertFixedAsMade(pip: PublicIPAddress, settings: AzureServiceSettings, family: IpFamily): void {
  const prefix = pip.publicIPPrefix?.id;
  if (!sameOptionalId(prefix, settings.publicIpPrefixId))
    throw new ConfigurationError(
      "PublicIPPrefixImmutable",
      `metadata.annotations[${keys(family).pipPrefixId}]`,
      `public IP ${pip.name} was made ${prefix ? `from prefix ${prefix}` : "without a prefix"}, and ARM cannot ` +
        "change a public IP's prefix",
      `restore the annotation${prefix ? ` to ${prefix}` : " (remove it)"}, or delete and re-create the Service ` +
        "to get a new public IP (and a new address) from the new prefix",
    );
  const current = ipTagsOf(pip);
  if (sameIpTags(current, settings.ipTags)) return;
  const shown = current.map((t) => `${t.ipTagType}=${t.tag}`).join(",") || "none";
  throw new ConfigurationError(
    "PublicIPTagsImmutable",
    `metadata.annotations[${AZURE_ANNOTATIONS.ipTags}]`,
    `public IP ${pip.name} was made with IP tags ${shown}, and ARM cannot change them on an existing public IP`,
    `restore the annotation to "${current.map((t) => `${t.ipTagType}=${t.tag}`).join(",")}", or delete and ` +
      "re-create the Service to get a new public IP (and a new address) with the new tags",
  );
}

/**
 * A user's public IP is used as it is: Portico does not write to what it did not make; nor does a Service
 * sharing another Service's public IP change it. What the Service asks of it must already be so;
 * cloud-provider-azure would set the DNS label on a user's, Portico asks the owner to.
 */
function assertUserIpAsAsked(pip: PublicIPAddress, settings: AzureServiceSettings, family: IpFamily): void {
  const whose = pip.tags?.[TAG.serviceUid]
    ? `Service ${pip.tags[TAG.service] ?? pip.tags[TAG.serviceUid]}'s, which this Service only shares`
    : "the user's";
  const label = dnsLabelOf(pip);
  if (settings.dnsLabel && settings.dnsLabel !== label)
    throw new ConfigurationError(
      "PublicIPNotPortico",
      `metadata.annotations[${AZURE_ANNOTATIONS.dnsLabelName}]`,
      `asks for DNS label ${settings.dnsLabel}, but public IP ${pip.name} is ${whose} and has ` +
        `${label ? `label ${label}` : "no label"}`,
      `set the label on the public IP's own Service, or on your public IP yourself (az network public-ip update --dns-name ${settings.dnsLabel}); or remove the annotation`,
    );
  if (settings.publicIpPrefixId && !sameOptionalId(pip.publicIPPrefix?.id, settings.publicIpPrefixId))
    throw new ConfigurationError(
      "PublicIPNotPortico",
      `metadata.annotations[${keys(family).pipPrefixId}]`,
      `public IP ${pip.name} is ${whose} and is not from that prefix; a prefix applies to a public IP as it is made`,
      "remove the annotation, or name a public IP made from the prefix",
    );
  if (settings.ipTags.length && !sameIpTags(ipTagsOf(pip), settings.ipTags))
    throw new ConfigurationError(
      "PublicIPNotPortico",
      `metadata.annotations[${AZURE_ANNOTATIONS.ipTags}]`,
      `asks for IP tags public IP ${pip.name} does not have; it is ${whose}, and IP tags are fixed at creation`,
      "remove the annotation, or name a public IP made with those IP tags",
    );
}

/** The version of a public IP (ARM's default is IPv4). */
export function familyOf(pip: PublicIPAddress): IpFamily {
  return pip.publicIPAddressVersion === "IPv6" ? "IPv6" : "IPv4";
}

/** A frontend of one family takes a public IP of the same family; ARM refuses any other. */
function assertOfFamily(pip: PublicIPAddress, family: IpFamily, field: string): void {
  if (familyOf(pip) === family) return;
  const v6 = family === "IPv6";
  throw new ConfigurationError(
    "PublicIPWrongFamily",
    field,
    `public IP ${pip.name} is ${familyOf(pip)}, and it is asked for the Service's ${family} frontend`,
    v6
      ? `name an IPv6 public IP with ${AZURE_ANNOTATIONS.pipNameIpv6} (or ask for its address with ${AZURE_ANNOTATIONS.ipv6})`
      : `name an IPv4 public IP with ${AZURE_ANNOTATIONS.pipName}; an IPv6 one goes in ${AZURE_ANNOTATIONS.pipNameIpv6}`,
  );
}

/** Portico made this public IP for this Service in this cluster. */
export function ownedBy(pip: PublicIPAddress, cluster: string, service: { uid: string }): boolean {
  return pip.tags?.[TAG.cluster] === cluster && pip.tags[TAG.serviceUid] === service.uid;
}

/**
 * The load balancer on which Services may share a user's public IP: the cluster's shared public one (one load
 * balancer per Service cannot share a frontend).
 */
function shareableOn(ctx: { cluster: string; config: AzureConfig }): string | undefined {
  if (ctx.config.loadBalancerPerService) return undefined;
  return sharedLoadBalancerName(ctx.config.loadBalancerName ?? ctx.cluster, false);
}

/**
 * Portico's public IP of another Service of this cluster, which this Service may share (shared.ts); or one whose
 * owner left while the Services still on it are being deleted (nobody's until the last of them deletes it): a
 * Service joining it then is on the list, and takes it over when the next of them leaves.
 */
function isSharedPorticoIp(pip: PublicIPAddress, cluster: string, service: ServiceRef): boolean {
  const owner = pip.tags?.[TAG.serviceUid];
  if (pip.tags?.[TAG.cluster] !== cluster || owner === service.uid) return false;
  return owner !== undefined || pip.tags[TAG.resource] === "publicip";
}

function assertUsable(
  pip: PublicIPAddress,
  service: ServiceRef,
  field: string,
  cluster: string,
  shareable: string | undefined,
  family: IpFamily,
): void {
  const otherService = pip.tags?.[TAG.serviceUid];
  if (otherService && otherService !== service.uid && (pip.tags?.[TAG.cluster] !== cluster || !shareable))
    throw new ConfigurationError(
      "PublicIPInUse",
      field,
      `public IP ${pip.name} is Portico's own for Service ${pip.tags?.[TAG.service] ?? otherService}` +
        (shareable ? " of another cluster" : ", and with one load balancer per Service it cannot be shared"),
      "use another public IP",
    );
  const user = pip.ipConfiguration?.id;
  // Another Service's frontend on the cluster's load balancer: the Services share it (sharedFrontends.ts).
  const sharedWithService =
    user !== undefined &&
    shareable !== undefined &&
    uidOfFrontend(nameOf(user)) !== undefined &&
    user.toLowerCase().includes(`/loadbalancers/${shareable.toLowerCase()}/frontendipconfigurations/`);
  // cloud-provider-azure's frontend of this Service: Portico takes it over (adoption/adoption.ts).
  const legacy = cpaFrontendNames(service.uid, family).includes(nameOf(user) ?? "");
  if (user && !sharedWithService && !legacy && nameOf(user) !== frontendName(service.uid, family))
    throw new ConfigurationError(
      "PublicIPInUse",
      field,
      `public IP ${pip.name} is already used by ${user}`,
      "use a public IP nothing else uses",
    );
  if (pip.sku?.name !== "Standard" || pip.publicIPAllocationMethod !== "Static")
    throw new ConfigurationError(
      "PublicIPNotStandard",
      field,
      `public IP ${pip.name} is ${pip.sku?.name ?? "Basic"}/${pip.publicIPAllocationMethod ?? "Dynamic"}, ` +
        "and a Standard load balancer needs a Standard static one",
      "use a Standard SKU public IP with static allocation",
    );
}
