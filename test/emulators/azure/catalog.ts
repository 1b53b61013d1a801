// What the emulated ARM offers: the api-versions it accepts and the regions resources may be created in.

/** Microsoft.Network versions: the one @azure/arm-network v39 sends, and recent ones before it. */
export const NETWORK_API_VERSIONS = [
  "2023-09-01",
  "2023-11-01",
  "2024-01-01",
  "2024-03-01",
  "2024-05-01",
  "2024-07-01",
  "2026-01-01",
] as const;

/** Microsoft.Resources versions for resource groups. */
export const RESOURCES_API_VERSIONS = [
  "2021-04-01",
  "2022-09-01",
  "2023-07-01",
  "2024-03-01",
  "2024-07-01",
  "2024-11-01",
  "2025-04-01",
] as const;

export const REGIONS = [
  "australiaeast",
  "brazilsouth",
  "canadacentral",
  "centralindia",
  "centralus",
  "eastasia",
  "eastus",
  "eastus2",
  "francecentral",
  "germanywestcentral",
  "japaneast",
  "koreacentral",
  "northeurope",
  "norwayeast",
  "southafricanorth",
  "southcentralus",
  "southeastasia",
  "swedencentral",
  "switzerlandnorth",
  "uksouth",
  "westeurope",
  "westus",
  "westus2",
  "westus3",
] as const;
