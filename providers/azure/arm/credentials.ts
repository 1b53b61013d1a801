// How Portico signs in to ARM. On AKS that is workload identity, which DefaultAzureCredential finds through the
// variables the webhook injects; a cloud-config file may instead carry a service principal or ask for the
// node's managed identity, as cloud-provider-azure's does.
import {
  ClientSecretCredential,
  DefaultAzureCredential,
  ManagedIdentityCredential,
  type TokenCredential,
} from "@azure/identity";
import type { AzureConfig } from "../config.ts";

/** Authorities MSAL knows; any other host (Azure Stack, a sovereign cloud's own, an emulator) is not validated. */
const KNOWN_AUTHORITIES = ["login.microsoftonline.com", "login.chinacloudapi.cn", "login.microsoftonline.us"];

export function createCredential(config: AzureConfig): TokenCredential {
  const authorityHost = config.activeDirectoryAuthorityHost;
  // MSAL checks an unknown authority by asking login.microsoftonline.com, which fails where that is not the
  // authority's cloud; the authority's own metadata document is read instead.
  const authority = authorityHost
    ? {
        authorityHost,
        disableInstanceDiscovery: !KNOWN_AUTHORITIES.includes(new URL(authorityHost).hostname),
      }
    : {};
  if (config.aadClientId && config.aadClientSecret && config.tenantId)
    return new ClientSecretCredential(config.tenantId, config.aadClientId, config.aadClientSecret, authority);
  if (config.useManagedIdentityExtension)
    return new ManagedIdentityCredential(
      config.userAssignedIdentityID ? { clientId: config.userAssignedIdentityID } : {},
    );
  return new DefaultAzureCredential({
    ...authority,
    ...(config.tenantId ? { tenantId: config.tenantId } : {}),
  });
}
