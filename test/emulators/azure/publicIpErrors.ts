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
