import { describe, expect, it } from "vitest";
import { requestFromService } from "./request.ts";

describe("requestFromService", () => {
  it("asks for nothing when nothing is set", () => {
    expect(requestFromService({})).toEqual({ ok: true, request: {} });
    expect(
      requestFromService({ loadBalancerIP: "  ", annotations: { "metallb.io/address-pool": "" } }),
    ).toEqual({
      ok: true,
      request: {},
    });
  });

  it("reads spec.loadBalancerIP", () => {
    expect(requestFromService({ loadBalancerIP: "10.0.0.5" })).toEqual({
      ok: true,
      request: { addresses: ["10.0.0.5"], addressesField: "spec.loadBalancerIP" },
    });
  });

  it("reads MetalLB's and Portico's annotations, comma-separated addresses included", () => {
    for (const prefix of ["metallb.io", "portico.io", "metallb.universe.tf"]) {
      const result = requestFromService({
        annotations: {
          [`${prefix}/loadBalancerIPs`]: "10.0.0.5, fd00::5",
          [`${prefix}/address-pool`]: "gold",
          [`${prefix}/allow-shared-ip`]: "web",
        },
      });
      expect(result).toEqual({
        ok: true,
        request: {
          addresses: ["10.0.0.5", "fd00::5"],
          addressesField: `metadata.annotations["${prefix}/loadBalancerIPs"]`,
          pool: "gold",
          poolField: `metadata.annotations["${prefix}/address-pool"]`,
          sharingKey: "web",
          sharingKeyField: `metadata.annotations["${prefix}/allow-shared-ip"]`,
        },
      });
    }
  });

  it("accepts the same request from several sources", () => {
    const result = requestFromService({
      loadBalancerIP: "10.0.0.5",
      annotations: {
        "metallb.io/loadBalancerIPs": "10.0.0.5",
        "portico.io/address-pool": "a",
        "metallb.io/address-pool": "a",
      },
    });
    expect(result).toMatchObject({ ok: true, request: { addresses: ["10.0.0.5"], pool: "a" } });
  });

  it("refuses sources that disagree, naming them all", () => {
    const addresses = requestFromService({
      loadBalancerIP: "10.0.0.5",
      annotations: { "portico.io/loadBalancerIPs": "10.0.0.6" },
    });
    expect(addresses).toEqual({
      ok: false,
      error: {
        reason: "ConflictingAnnotations",
        fields: ["spec.loadBalancerIP", 'metadata.annotations["portico.io/loadBalancerIPs"]'],
        message:
          'the Service asks for different things in spec.loadBalancerIP="10.0.0.5", ' +
          'metadata.annotations["portico.io/loadBalancerIPs"]="10.0.0.6"; keep one of them or make them equal',
      },
    });
    const pools = requestFromService({
      annotations: { "portico.io/address-pool": "a", "metallb.io/address-pool": "b" },
    });
    expect(pools).toMatchObject({ ok: false, error: { reason: "ConflictingAnnotations" } });
    const keys = requestFromService({
      annotations: { "portico.io/allow-shared-ip": "a", "metallb.io/allow-shared-ip": "b" },
    });
    expect(keys).toMatchObject({ ok: false, error: { reason: "ConflictingAnnotations" } });
  });
});
