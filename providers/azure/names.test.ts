import { describe, expect, it } from "vitest";
import {
  armName,
  belongsTo,
  frontendName,
  publicIpName,
  ruleName,
  serviceLoadBalancerName,
  sharedLoadBalancerName,
  uidOfFrontend,
} from "./names.ts";

const UID = "6f1c2e8a-1b2c-4d3e-8f90-0123456789ab";

describe("names", () => {
  it("name a frontend after the Service's UID, as cloud-provider-azure does, and read the UID back", () => {
    expect(frontendName(UID)).toBe("a6f1c2e8a1b2c4d3e8f900123456789ab");
    expect(uidOfFrontend(frontendName(UID))).toBe(UID);
    expect(uidOfFrontend("fe")).toBeUndefined();
    expect(uidOfFrontend(undefined)).toBeUndefined();
  });

  it("name rules and probes after the frontend, protocol and port, and tell them apart from other Services'", () => {
    const fe = frontendName(UID);
    expect(ruleName(fe, "TCP", 443)).toBe(`${fe}-TCP-443`);
    expect(belongsTo(`${fe}-TCP-443`, fe)).toBe(true);
    expect(belongsTo(fe, fe)).toBe(true);
    expect(belongsTo(`${fe}x-TCP-443`, fe)).toBe(false);
    expect(belongsTo("users-rule", fe)).toBe(false);
    expect(belongsTo(undefined, fe)).toBe(false);
  });

  it("keep load balancer and public IP names within ARM's 80 characters and alphabet", () => {
    const long = "a-very-long-cluster-name-that-goes-on-and-on-well-past-what-arm-allows-in-a-name";
    for (const name of [
      sharedLoadBalancerName(long, false),
      sharedLoadBalancerName(long, true),
      serviceLoadBalancerName(long, UID, true),
      publicIpName(long, UID),
    ]) {
      expect(name.length).toBeLessThanOrEqual(80);
      expect(name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9_]$/);
    }
    expect(sharedLoadBalancerName("kubernetes", true)).toBe("kubernetes-internal");
    expect(publicIpName("kubernetes", UID)).toBe(`kubernetes-${frontendName(UID)}`);
    expect(serviceLoadBalancerName("k", UID, false)).toBe(`k-${frontendName(UID)}`);
  });

  it("clean what ARM does not accept", () => {
    expect(armName("my cluster/one.")).toBe("my-cluster-one");
    expect(armName("--x")).toBe("x");
    expect(armName("///")).toBe("portico");
  });
});
