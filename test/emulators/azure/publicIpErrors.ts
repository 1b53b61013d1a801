// The public IP errors about DNS labels and IP tags. Those marked "ARM returns" are quoted from ARM responses on
// public record; the rest enforce documented behaviour whose exact error code Azure does not publish.
import { ArmError } from "./errors.ts";

const badRequest = (code: string, message: string): ArmError => new ArmError(400, code, message);

/** ARM returns this when another public IP in the region already has the label (the record is per region). */
export const dnsRecordInUse = (label: string, location: string): ArmError =>
  badRequest(
    "DnsRecordInUse",
    `DNS record ${label}.${location}.cloudapp.azure.com is already used by another public IP.`,
  );

/** A label outside the rule ARM states for domain name labels. */
export const invalidDomainNameLabel = (label: string): ArmError =>
  badRequest(
    "InvalidDomainNameLabel",
    `The domain name label ${label} is invalid. It must conform to the following regular expression: ` +
      "^[a-z][a-z0-9-]{1,61}[a-z0-9]$.",
  );

/**
 * IP tags are set when a public IP is created (Azure documents routing preference as "can only be set at the
 * time of creation"); the emulator refuses changing them on an existing public IP under this name.
 */
export const ipTagsCannotBeModified = (pipId: string): ArmError =>
  badRequest(
    "PublicIPAddressIpTagsCannotBeModified",
    `IP tags of public IP address ${pipId} cannot be changed after it is created.`,
  );

/** Seen in ARM's answers when a prefix has handed out every address it has. */
export const publicIpPrefixOutOfIpAddresses = (prefixId: string, size: number): ArmError =>
  badRequest(
    "PublicIpPrefixOutOfIpAddresses",
    `Public IP prefix ${prefixId} has no free IP address: all ${size} of its addresses are allocated to public IPs.`,
  );

/** A prefix length Azure does not offer for Microsoft-owned ranges (/28-/31 for IPv4, /124-/127 for IPv6). */
export const invalidPublicIpPrefixLength = (prefixId: string, length: number | undefined): ArmError =>
  badRequest(
    "InvalidPublicIPPrefixLength",
    `Public IP prefix ${prefixId} has prefix length ${length ?? "<none>"}; it must be 28 to 31 for IPv4 or 124 to 127 for IPv6.`,
  );

/** A prefix's length and version, and a public IP's prefix, are fixed when they are created. */
export const publicIpPrefixCannotBeModified = (id: string, what: string): ArmError =>
  badRequest("PublicIPPrefixCannotBeModified", `The ${what} of ${id} cannot be changed after it is created.`);

/** Deleting a prefix public IPs still take their addresses from. */
export const publicIpPrefixInUse = (prefixId: string, users: string[]): ArmError =>
  badRequest(
    "PublicIPPrefixInUseCannotBeDeleted",
    `Public IP prefix ${prefixId} cannot be deleted since public IP addresses ${users.join(", ")} are allocated from it.`,
  );

/** A public IP from a prefix must match it: Standard, Static, the prefix's IP version and region. */
export const publicIpPrefixMismatch = (pipId: string, prefixId: string, why: string): ArmError =>
  badRequest(
    "PublicIPPrefixMismatch",
    `Public IP address ${pipId} cannot be allocated from ${prefixId}: ${why}.`,
  );
