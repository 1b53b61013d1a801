import { describe, expect, test } from "vitest";
import { UsageError } from "../shared/usageError.ts";
import { readAzureConfig } from "./azure/descriptor.ts";
import { LBC_NLB_CLASS } from "./classes.ts";
import { inspectionHint, inspectorFor, PROVIDER_NAMES, PROVIDERS, providerForClass } from "./registry.ts";

describe("the provider registry", () => {
  test("each provider's class is read with that provider's annotations", () => {
    for (const name of PROVIDER_NAMES)
      expect(providerForClass(PROVIDERS[name].loadBalancerClass)?.name).toBe(name);
    expect(providerForClass(LBC_NLB_CLASS)?.name).toBe("aws");
    expect(providerForClass("example.com/other")).toBeUndefined();
  });

  test("porticoctl reads AWS for Portico's NLB class and the AWS Load Balancer Controller's", async () => {
    for (const cls of [PROVIDERS.aws.loadBalancerClass, LBC_NLB_CLASS])
      expect((await inspectorFor(cls, "prod"))?.name).toBe("aws");
  });

  test("Azure is read only with the controller's configuration, and porticoctl says how to give it", async () => {
    const cls = PROVIDERS.azure.loadBalancerClass;
    expect(await inspectorFor(cls, "prod")).toBeUndefined();
    expect(inspectionHint(cls)).toMatch(/--azure-config FILE/);
    const azure = readAzureConfig(undefined, {
      AZURE_SUBSCRIPTION_ID: "00000000-0000-0000-0000-000000000001",
      PORTICO_AZURE_RESOURCE_GROUP: "rg",
      PORTICO_AZURE_LOCATION: "westeurope",
      PORTICO_AZURE_VNET_NAME: "vnet",
      PORTICO_AZURE_SUBNET_NAME: "nodes",
    });
    expect((await inspectorFor(cls, "prod", { given: { azure } }))?.name).toBe("azure");
    expect(inspectionHint(cls, { given: { azure } })).toBeUndefined();
    // The location the serving controller published serves as well as a file the user gives.
    const published = { provider: "azure", settings: azure };
    expect((await inspectorFor(cls, "prod", { published }))?.name).toBe("azure");
    // Another provider's published settings are not Azure's.
    expect(await inspectorFor(cls, "prod", { published: { ...published, provider: "aws" } })).toBeUndefined();
  });

  test("bare metal and foreign classes have no cloud to inspect", async () => {
    expect(await inspectorFor(PROVIDERS.metal.loadBalancerClass, "prod")).toBeUndefined();
    expect(await inspectorFor("example.com/other", "prod")).toBeUndefined();
    expect(await inspectorFor(undefined, "prod")).toBeUndefined();
  });

  test("what the controller's cache watches follows each provider's settings", () => {
    expect(PROVIDERS.aws.needs()).toEqual({});
    const metal = (metallb?: string) => PROVIDERS.metal.needs(PROVIDERS.metal.settings({ metallb }, {}));
    expect(metal()).toEqual({ pools: true, metallb: { namespace: "metallb-system", required: false } });
    expect(metal("on")).toEqual({ pools: true, metallb: { namespace: "metallb-system", required: true } });
    expect(metal("off")).toEqual({ pools: true });
    expect(() => metal("sometimes")).toThrow(UsageError);
    expect(PROVIDERS.azure.needs({} as Parameters<typeof PROVIDERS.azure.needs>[0])).toEqual({
      namespaces: false,
    });
  });
});
