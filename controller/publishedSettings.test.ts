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
  settings: {
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
      settings: {
        subscriptionId: "sub",
        resourceGroup: "rg",
        location: "westeurope",
        vnetName: "vnet",
        subnetName: "nodes",
      },
    });
  });

  it("carry an AWS controller's defaults and limits, by which tools judge Services as it does", () => {
    const aws = {
      ...config,
      provider: "aws",
      settings: { defaultScheme: "internet-facing", observationTtlMs: 60_000, rulesPerSecurityGroup: 200 },
    } as unknown as ControllerConfig;
    expect(readSettings({ metadata: { annotations: settingsAnnotation(aws) } })?.settings).toEqual({
      defaultScheme: "internet-facing",
      rulesPerSecurityGroup: 200,
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
