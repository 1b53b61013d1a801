import { describe, expect, it } from "vitest";
import { cpaBaseName } from "../adoption/cloudProviderAzure.ts";
import { withoutLegacySecurityRules } from "./legacyRules.ts";
import type { NetworkSecurityGroup } from "../model.ts";
import { UID } from "../../../test/unit/support/azure.ts";

type Rule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];
const rule = (name: string, priority: number, destinations: string[], over: Partial<Rule> = {}): Rule => ({
  name,
  priority,
  direction: "Inbound",
  access: "Allow",
  protocol: "Tcp",
  ...(destinations.length === 1
    ? { destinationAddressPrefix: destinations[0] }
    : { destinationAddressPrefixes: destinations }),
  ...over,
});
const base = cpaBaseName(UID);

describe("cloud-provider-azure's security rules for an address Portico took over", () => {
  const nsg: NetworkSecurityGroup = {
    name: "nsg",
    securityRules: [
      rule("k8s-azure-lb_allow_IPv4_aaaa", 500, ["20.0.0.1", "20.0.0.2"]),
      rule("k8s-azure-lb_allow_IPv4_bbbb", 501, ["20.0.0.1"]),
      rule("k8s-azure-lb_deny-all_IPv4", 4095, ["20.0.0.1", "20.0.0.2", "20.0.0.3"], { access: "Deny" }),
      rule(`${base}-TCP-80-Internet`, 502, ["20.0.0.1"]),
      rule(`${base}-UDP-53-10.0.0.0_8`, 503, ["20.0.0.1"]),
      // Outside cloud-provider-azure's priorities, or not its names: the user's, never touched.
      rule("k8s-azure-lb_allow_IPv4_cccc", 200, ["20.0.0.1"]),
      rule("users-rule", 600, ["20.0.0.1"]),
      rule(`${base}b-TCP-80`, 504, ["20.0.0.1"], { description: "portico:x:shop/web" }),
    ],
  };

  it("takes the address out of the shared rules, drops those left empty and the Service's own", () => {
    const after = withoutLegacySecurityRules(nsg, UID, "20.0.0.1");
    expect(after.securityRules).toEqual([
      rule("k8s-azure-lb_allow_IPv4_aaaa", 500, ["20.0.0.2"]),
      rule("k8s-azure-lb_deny-all_IPv4", 4095, ["20.0.0.2", "20.0.0.3"], { access: "Deny" }),
      rule("k8s-azure-lb_allow_IPv4_cccc", 200, ["20.0.0.1"]),
      rule("users-rule", 600, ["20.0.0.1"]),
      rule(`${base}b-TCP-80`, 504, ["20.0.0.1"], { description: "portico:x:shop/web" }),
    ]);
  });

  it("changes nothing when none is left, so the plan stops asking", () => {
    const once = withoutLegacySecurityRules(nsg, UID, "20.0.0.1");
    expect(withoutLegacySecurityRules(once, UID, "20.0.0.1")).toBe(once);
    expect(withoutLegacySecurityRules(nsg, "0b1b2c3d-0000-4000-8000-00000000000b", "20.0.0.9")).toBe(nsg);
  });
});
