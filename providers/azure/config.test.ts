import { describe, expect, it } from "vitest";
import { parseAzureConfig, resourceGroups } from "./config.ts";

const azureJson = {
  cloud: "AzurePublicCloud",
  tenantId: "t",
  subscriptionId: "s",
  resourceGroup: "MC_rg_aks_eastus",
  location: "East US",
  vnetName: "aks-vnet",
  vnetResourceGroup: "net",
  subnetName: "aks-subnet",
  securityGroupName: "aks-agentpool-nsg",
  loadBalancerSku: "Standard",
  useManagedIdentityExtension: true,
  userAssignedIdentityID: "id",
  cloudProviderBackoff: true,
};

describe("parseAzureConfig", () => {
  it("reads AKS's azure.json, ignoring what it does not use", () => {
    expect(parseAzureConfig(azureJson)).toEqual({
      tenantId: "t",
      subscriptionId: "s",
      resourceGroup: "MC_rg_aks_eastus",
      location: "eastus",
      vnetName: "aks-vnet",
      vnetResourceGroup: "net",
      subnetName: "aks-subnet",
      securityGroupName: "aks-agentpool-nsg",
      useManagedIdentityExtension: true,
      userAssignedIdentityID: "id",
    });
  });

  it("takes the rate limiter's setting from the file, and PORTICO_AZURE_RATE_* over it", () => {
    expect(parseAzureConfig(azureJson).rateLimit).toBeUndefined();
    expect(parseAzureConfig({ ...azureJson, rateLimit: true }).rateLimit).toBeUndefined();
    expect(parseAzureConfig({ ...azureJson, rateLimit: false }).rateLimit).toBe(false);
    expect(parseAzureConfig({ ...azureJson, rateLimit: { share: 0.5 } }).rateLimit).toEqual({ share: 0.5 });
    expect(
      parseAzureConfig({ ...azureJson, rateLimit: { share: 0.5 } }, { PORTICO_AZURE_RATE_LIMIT: "off" })
        .rateLimit,
    ).toBe(false);
    expect(
      parseAzureConfig({ ...azureJson, rateLimit: false }, { PORTICO_AZURE_RATE_SHARE: "0.2" }).rateLimit,
    ).toEqual({ share: 0.2 });
    for (const bad of [{ share: 0 }, { share: "half" }, { qps: 10 }, "on"])
      expect(() => parseAzureConfig({ ...azureJson, rateLimit: bad })).toThrow(
        'Azure config "rateLimit" must be true, false or { "share": a number above 0 and at most 1 }',
      );
    expect(() => parseAzureConfig(azureJson, { PORTICO_AZURE_RATE_SHARE: "2" })).toThrow(
      "PORTICO_AZURE_RATE_SHARE=2 is not a share above 0 and at most 1 (e.g. 0.5)",
    );
  });

  it("takes floatingIPDefault, for clusters keeping cloud-provider-azure's floating IP default", () => {
    expect(parseAzureConfig({ ...azureJson, floatingIPDefault: true }).floatingIPDefault).toBe(true);
    expect(parseAzureConfig(azureJson).floatingIPDefault).toBeUndefined();
  });

  it("lets the environment override single keys", () => {
    const config = parseAzureConfig(azureJson, {
      AZURE_SUBSCRIPTION_ID: "other",
      AZURE_RESOURCE_MANAGER_ENDPOINT: "https://127.0.0.1:8443",
      PORTICO_AZURE_SECURITY_GROUP_NAME: "nsg2",
    });
    expect(config).toMatchObject({
      subscriptionId: "other",
      resourceManagerEndpoint: "https://127.0.0.1:8443",
      securityGroupName: "nsg2",
    });
  });

  it("builds a configuration from the environment alone", () => {
    expect(
      parseAzureConfig(
        {},
        {
          AZURE_SUBSCRIPTION_ID: "s",
          PORTICO_AZURE_RESOURCE_GROUP: "rg",
          PORTICO_AZURE_LOCATION: "westeurope",
          PORTICO_AZURE_VNET_NAME: "v",
          PORTICO_AZURE_SUBNET_NAME: "n",
        },
      ),
    ).toEqual({
      subscriptionId: "s",
      resourceGroup: "rg",
      location: "westeurope",
      vnetName: "v",
      subnetName: "n",
    });
  });

  it.each([
    [[], "must be a JSON object"],
    [{ ...azureJson, subscriptionId: undefined }, '"subscriptionId" is required (or AZURE_SUBSCRIPTION_ID)'],
    [{ ...azureJson, vnetName: "" }, '"vnetName" is required'],
    [{ ...azureJson, loadBalancerSku: "basic" }, "Standard load balancers only"],
    [{ ...azureJson, location: 5 }, '"location" must be a string'],
    [{ ...azureJson, loadBalancerPerService: "yes" }, "must be true or false"],
    [{ ...azureJson, floatingIPDefault: "true" }, '"floatingIPDefault" must be true or false'],
    [{ ...azureJson, maxRetries: -1 }, "whole number"],
    [{ ...azureJson, aadClientSecret: "x" }, 'needs "aadClientId"'],
    [{ ...azureJson, limits: [] }, '"limits" must be an object'],
    [{ ...azureJson, limits: { frontends: 5 } }, '"limits.frontends" is not a limit'],
    [
      { ...azureJson, limits: { securityRulesPerGroup: 2.5 } },
      '"limits.securityRulesPerGroup" must be a whole number',
    ],
    [{ ...azureJson, tenantId: undefined, aadClientId: "a", aadClientSecret: "x" }, 'needs "tenantId"'],
  ])("refuses %j: %s", (file, message) => {
    expect(() => parseAzureConfig(file)).toThrow(message);
  });

  it("takes the limits a subscription is held to, leaving the others at Azure's", () => {
    const config = parseAzureConfig({
      ...azureJson,
      limits: { securityRulesPerGroup: 500, rulesPerBackendAddress: 0 },
    });
    expect(config.limits).toEqual({ securityRulesPerGroup: 500, rulesPerBackendAddress: 0 });
    expect(parseAzureConfig(azureJson).limits).toBeUndefined();
  });

  it("defaults every resource group to the cluster's", () => {
    const config = parseAzureConfig({ ...azureJson, vnetResourceGroup: undefined });
    expect(resourceGroups(config)).toEqual({
      loadBalancers: "MC_rg_aks_eastus",
      publicIps: "MC_rg_aks_eastus",
      vnet: "MC_rg_aks_eastus",
      securityGroup: "MC_rg_aks_eastus",
    });
  });
});
