import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import type { DesiredSecurityRule, NetworkSecurityGroup } from "../model.ts";
import { frontendName } from "../names.ts";
import { isPorticoRule, PRIORITY_RANGE, withoutServiceRules, withServiceRules } from "./rulesEdit.ts";
import { FE, OTHER_UID } from "../../../test/unit/support/azure.ts";

type Rule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];
const OTHER_FE = frontendName(OTHER_UID);
const description = "portico:0123456789:shop/web";
const http: DesiredSecurityRule = {
  name: `${FE}-TCP-80`,
  access: "Allow",
  protocol: "Tcp",
  destinationPort: 30080,
  sources: ["Internet"],
  destination: ["10.0.1.11", "10.0.1.10"],
};
const users = (priority: number, name = `users-${priority}`): Rule => ({
  name,
  description: "mine",
  protocol: "Tcp",
  access: "Allow",
  direction: "Inbound",
  priority,
  sourcePortRange: "*",
  destinationPortRange: "22",
  sourceAddressPrefix: "10.0.0.0/8",
  destinationAddressPrefix: "*",
});
const want = (rules: DesiredSecurityRule[], frontendAddress?: string) => ({
  frontend: FE,
  description,
  rules,
  ...(frontendAddress ? { frontendAddress } : {}),
});

describe("withServiceRules", () => {
  it("adds the Service's rule at the first free priority from 500, marked as Portico's", () => {
    const nsg = withServiceRules({ securityRules: [users(500), users(100)] }, want([http]));
    const rule = nsg.securityRules!.find((r) => r.name === http.name)!;
    expect(rule).toEqual({
      name: `${FE}-TCP-80`,
      description,
      protocol: "Tcp",
      access: "Allow",
      direction: "Inbound",
      priority: 501,
      sourcePortRange: "*",
      destinationPortRange: "30080",
      sourceAddressPrefix: "Internet",
      destinationAddressPrefixes: ["10.0.1.10", "10.0.1.11"],
    });
    expect(isPorticoRule(rule, FE)).toBe(true);
    expect(nsg.securityRules).toContainEqual(users(500));
  });

  it("returns the group itself when the Service's rules are as desired, and keeps their priorities", () => {
    const once = withServiceRules({ securityRules: [] }, want([http]));
    expect(withServiceRules(once, want([http]))).toBe(once);
    const moved = withServiceRules(once, want([{ ...http, sources: ["203.0.113.0/24", "198.51.100.0/24"] }]));
    expect(moved.securityRules![0]).toMatchObject({
      priority: 500,
      sourceAddressPrefixes: ["198.51.100.0/24", "203.0.113.0/24"],
    });
  });

  it("gives concurrent Services' rules distinct priorities, since each edit reads what the last wrote", () => {
    let nsg: NetworkSecurityGroup = { securityRules: [] };
    nsg = withServiceRules(nsg, want([http]));
    nsg = withServiceRules(nsg, { ...want([{ ...http, name: `${OTHER_FE}-TCP-80` }]), frontend: OTHER_FE });
    expect(nsg.securityRules!.map((r) => r.priority)).toEqual([500, 501]);
  });

  it("moves a rule whose priority the user has since taken", () => {
    const once = withServiceRules({ securityRules: [] }, want([http]));
    const crowded = { securityRules: [...once.securityRules!, users(500)] };
    expect(
      withServiceRules(crowded, want([http])).securityRules!.find((r) => r.name === http.name)!.priority,
    ).toBe(501);
  });

  it("waits for the frontend's address before writing a rule to it", () => {
    const floating: DesiredSecurityRule = { ...http, destination: "frontend", destinationPort: 80 };
    expect(withServiceRules({ securityRules: [] }, want([floating])).securityRules).toEqual([]);
    const rule = withServiceRules({ securityRules: [] }, want([floating], "20.0.0.7")).securityRules![0]!;
    expect(rule).toMatchObject({ destinationAddressPrefix: "20.0.0.7", destinationPortRange: "80" });
  });

  it("drops the Service's rules it no longer wants, and leaves a user's rule that merely looks like one", () => {
    const lookalike = { ...users(600, `${FE}-TCP-22`) };
    const once = withServiceRules(
      { securityRules: [lookalike] },
      want([http, { ...http, name: `${FE}-TCP-443` }]),
    );
    expect(once.securityRules).toHaveLength(3);
    const fewer = withServiceRules(once, want([http]));
    expect(fewer.securityRules!.map((r) => r.name).sort()).toEqual([`${FE}-TCP-22`, `${FE}-TCP-80`]);
  });

  it("refuses a desired name a user's rule already has", () => {
    expect(() => withServiceRules({ securityRules: [users(600, http.name)] }, want([http]))).toThrow(
      ConfigurationError,
    );
  });

  it("refuses when no priority is free", () => {
    const full = Array.from({ length: PRIORITY_RANGE.max - PRIORITY_RANGE.min + 1 }, (_, i) =>
      users(PRIORITY_RANGE.min + i),
    );
    expect(() => withServiceRules({ securityRules: full }, want([http]))).toThrow(/no free priority/);
  });

  it("places a Deny rule from the top of the range down, below the allows, and keeps both in place after", () => {
    const deny: DesiredSecurityRule = {
      ...http,
      name: `${FE}-TCP-80-deny-all`,
      access: "Deny",
      sources: ["*"],
    };
    const nsg = withServiceRules({ securityRules: [users(4095)] }, want([http, deny]));
    const byName = (name: string) => nsg.securityRules!.find((r) => r.name === name)!;
    expect(byName(http.name)).toMatchObject({ access: "Allow", priority: 500 });
    expect(byName(deny.name)).toMatchObject({ access: "Deny", priority: 4094, sourceAddressPrefix: "*" });
    expect(withServiceRules(nsg, want([http, deny]))).toBe(nsg);
  });

  it("counts only inbound rules as taking an inbound priority", () => {
    const outbound = { ...users(500), direction: "Outbound" };
    expect(withServiceRules({ securityRules: [outbound] }, want([http])).securityRules![1]!.priority).toBe(
      500,
    );
  });
});

describe("withoutServiceRules", () => {
  it("takes out the Service's rules only, and is a no-op when it has none", () => {
    const once = withServiceRules({ securityRules: [users(100)] }, want([http]));
    expect(withoutServiceRules(once, FE).securityRules).toEqual([users(100)]);
    expect(withoutServiceRules(once, OTHER_FE)).toBe(once);
  });
});
