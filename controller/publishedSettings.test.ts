import { describe, expect, it } from "vitest";
import type { ControllerConfig } from "./config.ts";
import { readSettings, SETTINGS_ANNOTATION, settingsAnnotation } from "./publishedSettings.ts";
import { VERSION } from "./version.ts";

const config = {
  provider: "azure",
  clusterName: "prod",
  loadBalancerClass: "portico.io/azure-lb",
  defaultForUnclassed: true,
  nodeSelector: "pool=edge",
  aws: { defaultScheme: "internal", observationTtlMs: 60_000 },
  azure: {
    subscriptionId: "sub",
    resourceGroup: "rg",
    location: "westeurope",
    vnetName: "vnet",
    subnetName: "nodes",
    aadClientId: "client",
    aadClientSecret: "s3cret",
    userAssignedIdentityID: "mi",
  },
} as unknown as ControllerConfig;

describe("published settings", () => {
  it("carry what tools need and never a secret or identity", () => {
    const annotation = settingsAnnotation(config)[SETTINGS_ANNOTATION]!;
    expect(annotation).not.toContain("s3cret");
    expect(annotation).not.toContain("client");
    expect(annotation).not.toContain('"mi"');
    const read = readSettings({ metadata: { annotations: settingsAnnotation(config) } });
    expect(read).toEqual({
      version: VERSION,
      provider: "azure",
      loadBalancerClass: "portico.io/azure-lb",
      defaultForUnclassed: true,
      clusterName: "prod",
      nodeSelector: "pool=edge",
      azure: {
        subscriptionId: "sub",
        resourceGroup: "rg",
        location: "westeurope",
        vnetName: "vnet",
        subnetName: "nodes",
      },
    });
  });

  it("read nothing from a Lease without them, or with something else in their place", () => {
    expect(readSettings({ metadata: {} })).toBeUndefined();
    expect(
      readSettings({ metadata: { annotations: { [SETTINGS_ANNOTATION]: "{not json" } } }),
    ).toBeUndefined();
    expect(
      readSettings({
        metadata: { annotations: { [SETTINGS_ANNOTATION]: JSON.stringify({ provider: "gcp" }) } },
      }),
    ).toBeUndefined();
  });
});
