// What an Azure controller publishes of its cloud-config on its leader Lease: where it makes things (subscription,
// resource groups, names, the limits it plans within), never a credential. porticoctl then reads the load balancer
// where the controller made it, with the user's own credentials.
import type { AzureConfig } from "./config.ts";

const AZURE_PUBLIC_KEYS = [
  "subscriptionId",
  "tenantId",
  "resourceGroup",
  "location",
  "vnetName",
  "vnetResourceGroup",
  "subnetName",
  "securityGroupName",
  "securityGroupResourceGroup",
  "loadBalancerResourceGroup",
  "loadBalancerName",
  "loadBalancerPerService",
  "floatingIPDefault",
  "resourceManagerEndpoint",
  "activeDirectoryAuthorityHost",
  "limits",
] as const satisfies readonly (keyof AzureConfig)[];

export type PublishedAzure = Pick<AzureConfig, (typeof AZURE_PUBLIC_KEYS)[number]>;

export function publishedAzure(config: AzureConfig): PublishedAzure {
  return Object.fromEntries(
    AZURE_PUBLIC_KEYS.filter((k) => config[k] !== undefined).map((k) => [k, config[k]]),
  ) as PublishedAzure;
}
