import { describe, expect, it } from "vitest";
import type { DesiredSecurityRule, NetworkSecurityGroup } from "../model.ts";
import { ruleDifferences } from "./ruleDrift.ts";
import { withServiceRules } from "./rulesEdit.ts";
import { FE } from "../../../test/unit/support/azure.ts";

const description = "portico:0123456789:shop/web";
const rule = (port: number): DesiredSecurityRule => ({
  name: `${FE}-TCP-${port}`,
  access: "Allow",
  protocol: "Tcp",
  destinationPort: 30000 + port,
  sources: ["Internet"],
  destination: ["10.0.1.0/24"],
});
const want = { frontend: FE, description, rules: [rule(80), rule(443)] };
const users = {
  name: "ssh",
  description: "the user's",
  protocol: "Tcp",
  access: "Allow",
  direction: "Inbound",
  priority: 100,
  sourcePortRange: "*",
  destinationPortRange: "22",
  sourceAddressPrefix: "10.0.0.0/8",
  destinationAddressPrefix: "*",
};
/** The group as the Service's pass leaves it. */
const written = (): NetworkSecurityGroup =>
  withServiceRules({ name: "cluster-nsg", securityRules: [users] }, want);
type Rule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];
const edit = (nsg: NetworkSecurityGroup, f: (rules: Rule[]) => Rule[]) => ({
  ...nsg,
  securityRules: f(nsg.securityRules ?? []),
});

describe("ruleDifferences (Azure)", () => {
  it("finds nothing in the group as the pass wrote it, whatever else the group holds", () => {
    expect(ruleDifferences(written(), want)).toEqual([]);
    const more = edit(written(), (rules) => [...rules, { ...users, name: "rdp", priority: 101 }]);
    expect(ruleDifferences(more, want)).toEqual([]);
  });

  it("names a rule deleted, changed or added by hand", () => {
    const nsg = written();
    const deleted = edit(nsg, (rules) => rules.filter((r) => r.name !== `${FE}-TCP-443`));
    expect(ruleDifferences(deleted, want)).toEqual([
      { text: `security rule ${FE}-TCP-443 is gone from network security group cluster-nsg`, mendable: true },
    ]);
    const changed = edit(nsg, (rules) =>
      rules.map((r) => (r.name === `${FE}-TCP-80` ? { ...r, sourceAddressPrefix: "192.0.2.0/24" } : r)),
    );
    expect(ruleDifferences(changed, want)).toEqual([
      {
        text: `security rule ${FE}-TCP-80 was changed in network security group cluster-nsg`,
        mendable: true,
      },
    ]);
    const mine = nsg.securityRules!.find((r) => r.name === `${FE}-TCP-80`)!;
    const added = edit(nsg, (rules) => [...rules, { ...mine, name: `${FE}-TCP-8080`, priority: 900 }]);
    expect(ruleDifferences(added, want)).toEqual([
      {
        text: `security rule ${FE}-TCP-8080 was added to network security group cluster-nsg`,
        mendable: true,
      },
    ]);
  });

  it("a rule of the Service's name no longer marked as Portico's is told with the fix its pass gives", () => {
    const unmarked = edit(written(), (rules) =>
      rules.map((r) => (r.name === `${FE}-TCP-80` ? { ...r, description: "someone's" } : r)),
    );
    const [d] = ruleDifferences(unmarked, want);
    expect(d!.text).toMatch(
      /network security group cluster-nsg: .*rule named .*-TCP-80 that Portico did not make/,
    );
  });
});
