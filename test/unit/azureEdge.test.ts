// The emulated Azure load balancer's pure parts (test/harness/cloudEdge/azurePlan.ts): which members new flows
// may go to, how they are forwarded (translated without floating IP, marked and routed unchanged with it, dropped
// when no member passes or no rule takes them), and the NSG evaluated in priority order with Azure's defaults.
import { describe, expect, it } from "vitest";
import { stateKey, type EdgeHealthCheck, type TargetState } from "../harness/cloudEdge/checkPlan.ts";
import {
  azureIptables,
  floatingMembers,
  passing,
  ruleHealthReport,
  type AzureEdgeGroup,
  type AzureEdgeState,
  type AzureNsgRule,
} from "../harness/cloudEdge/azurePlan.ts";
import { azureRule } from "./support/edge.ts";
const probe: EdgeHealthCheck = {
  protocol: "TCP",
  port: "30001",
  intervalSeconds: 5,
  timeoutSeconds: 5,
  healthyThreshold: 1,
  unhealthyThreshold: 2,
};
const nodes = [
  { ip: "192.0.2.11", port: 30001 },
  { ip: "192.0.2.12", port: 30001 },
];
const group = (over: Partial<AzureEdgeGroup> = {}): AzureEdgeGroup => ({
  id: "pool|probe|30001",
  probe,
  targets: nodes,
  ...over,
});
const rule = azureRule;
const world = (over: Partial<AzureEdgeState> = {}): AzureEdgeState => ({
  rules: [rule()],
  groups: new Map([["pool|probe|30001", group()]]),
  nsgs: [],
  virtualNetwork: ["192.0.2.8/29", "10.244.0.0/16"],
  ...over,
});
const healthy = (...ips: string[]) =>
  new Map<string, TargetState>(
    nodes.map((t) => [stateKey("pool|probe|30001", t), ips.includes(t.ip) ? "healthy" : "unhealthy"]),
  );

describe("the members new flows go to", () => {
  it("are those passing the probe, or every member of a rule without one", () => {
    expect(passing(group(), healthy("192.0.2.12"))).toEqual([nodes[1]]);
    expect(passing(group(), healthy())).toEqual([]);
    const { probe: _, ...unprobed } = group();
    expect(passing(unprobed, healthy())).toEqual(nodes);
  });
});

describe("the per-rule health reported to ARM", () => {
  it("says Up for the members passing the rule's probe and Down for the others, per rule", () => {
    const id = rule().id;
    expect(ruleHealthReport(world(), healthy("192.0.2.12"))).toEqual({
      [id]: { "192.0.2.11": "Down", "192.0.2.12": "Up" },
    });
    const { probe: _, ...unprobed } = group();
    expect(ruleHealthReport(world({ groups: new Map([["pool|probe|30001", unprobed]]) }), healthy())).toEqual(
      { [id]: { "192.0.2.11": "Up", "192.0.2.12": "Up" } },
    );
  });
});

describe("the kernel's forwarding", () => {
  it("translates a rule's new flows to the passing members' backend port, spread evenly, and masquerades them", () => {
    const rules = azureIptables(world(), healthy("192.0.2.11", "192.0.2.12"));
    expect(rules).toContain("-A AZ-RULES -d 198.18.0.1/32 -p tcp --dport 80 -j ACCEPT");
    expect(rules).toMatch(
      /-p tcp -m statistic --mode random --probability 0\.5000000000 -j DNAT --to-destination 192\.0\.2\.11:30001/,
    );
    expect(rules).toMatch(/-p tcp -j DNAT --to-destination 192\.0\.2\.12:30001\n/);
    // Only LAN clients (answered past the edge otherwise) leave with the edge's address; others keep theirs.
    expect(rules).toContain("-A POSTROUTING -s 192.0.2.0/24 -m conntrack --ctstate DNAT -j MASQUERADE");
    expect(rules).not.toMatch(/^-A POSTROUTING (?!-s 192\.0\.2\.0\/24 )/m);
  });

  it("drops a rule's new flows when no member passes (Standard SKU), and whatever no rule takes", () => {
    const rules = azureIptables(world(), healthy());
    expect(rules).toContain("-A AZ-RULES -d 198.18.0.1/32 -p tcp --dport 80 -j DROP");
    expect(rules).not.toContain("-j DNAT");
    // The catch-all comes after every rule's own line.
    const lines = rules.split("\n");
    expect(lines.indexOf("-A AZ-RULES -d 198.18.0.1/32 -j DROP")).toBeGreaterThan(
      lines.indexOf("-A AZ-RULES -d 198.18.0.1/32 -p tcp --dport 80 -j DROP"),
    );
  });

  it("with floating IP marks the flow for its member and leaves the destination alone", () => {
    const state = world({ rules: [rule({ floatingIP: true, backendPort: 80 })] });
    expect(floatingMembers(state)).toEqual([
      { ip: "192.0.2.11", mark: 0x100, table: 100 },
      { ip: "192.0.2.12", mark: 0x101, table: 101 },
    ]);
    const rules = azureIptables(state, healthy("192.0.2.12"));
    expect(rules).toContain(`-m mark --mark 0 -j MARK --set-mark ${0x101}`);
    expect(rules).not.toContain(`--set-mark ${0x100}`);
    expect(rules).toContain("-j CONNMARK --save-mark");
    expect(rules).not.toContain("DNAT --to");
    // Only the original direction restores the mark: a reply must reach the edge to be translated back.
    expect(rules).toContain("-A PREROUTING -m conntrack --ctdir ORIGINAL -j CONNMARK --restore-mark");
  });

  it("takes both protocols for an All rule, and keeps the client's port on HA ports", () => {
    const rules = azureIptables(
      world({ rules: [rule({ protocol: "All", frontendPort: 0, backendPort: 0 })] }),
      healthy("192.0.2.11"),
    );
    expect(rules).toContain("-A AZ-RULES -d 198.18.0.1/32 -p tcp -j ACCEPT");
    expect(rules).toContain("-A AZ-RULES -d 198.18.0.1/32 -p udp -j ACCEPT");
    expect(rules).toMatch(/-j DNAT --to-destination 192\.0\.2\.11\n/);
  });
});

describe("the network security group", () => {
  const nsg = (rules: AzureNsgRule[]) => world({ nsgs: [{ id: "nsg", guards: ["192.0.2.8/29"], rules }] });
  const allow = (priority: number, over: Partial<AzureNsgRule> = {}): AzureNsgRule => ({
    priority,
    access: "Allow",
    protocol: "Tcp",
    sources: ["203.0.113.0/24"],
    destinations: ["192.0.2.8/29"],
    ports: ["30001"],
    ...over,
  });
  const chainLines = (rules: string) => rules.split("\n").filter((l) => l.startsWith("-A NSG-"));

  it("judges new flows to the subnets it guards, by priority, then AllowVnetInBound and DenyAllInBound", () => {
    const rules = azureIptables(nsg([allow(600, { access: "Deny", sources: ["*"] }), allow(500)]), healthy());
    expect(rules).toContain("-A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT");
    expect(rules).toMatch(/-A AZ-NSG -m mark --mark 0 -d 192\.0\.2\.8\/29 -j NSG-\w+/);
    const lines = chainLines(rules).map((l) => l.replace(/^-A NSG-\w+ /, ""));
    expect(lines[0]).toBe("-s 203.0.113.0/24 -d 192.0.2.8/29 -p tcp --dport 30001 -j ACCEPT");
    expect(lines[1]).toBe("-d 192.0.2.8/29 -p tcp --dport 30001 -j DROP");
    expect(lines).toContain("-s 192.0.2.8/29 -d 10.244.0.0/16 -j ACCEPT");
    expect(lines.at(-1)).toBe("-j DROP");
  });

  it("reads the Internet tag as every source outside the virtual network", () => {
    const rules = azureIptables(nsg([allow(500, { sources: ["Internet"] })]), healthy());
    const internet = chainLines(rules).filter((l) => /^-A NSG-\w+-500-I /.test(l));
    expect(internet.map((l) => l.replace(/^-A \S+ /, ""))).toEqual([
      "-s 192.0.2.8/29 -j RETURN",
      "-s 10.244.0.0/16 -j RETURN",
      "-j ACCEPT",
    ]);
  });

  it("expands any protocol with ports to TCP and UDP, and port ranges to iptables' form", () => {
    const rules = azureIptables(nsg([allow(500, { protocol: "*", ports: ["100-200"] })]), healthy());
    expect(rules).toContain("-p tcp --dport 100:200 -j ACCEPT");
    expect(rules).toContain("-p udp --dport 100:200 -j ACCEPT");
  });

  it("judges floating-IP flows by the member they are routed to", () => {
    const state = { ...nsg([]), rules: [rule({ floatingIP: true })] };
    expect(azureIptables(state, healthy("192.0.2.11"))).toMatch(
      new RegExp(`-A AZ-NSG -m mark --mark ${0x100} -j NSG-`),
    );
  });
});

describe("SourceIP distribution", () => {
  it("keeps a client on one member, with or without floating IP; Default spreads", () => {
    for (const floatingIP of [false, true]) {
      const all = healthy(...nodes.map((n) => n.ip));
      const sticky = azureIptables(world({ rules: [rule({ floatingIP, sourceAffinity: true })] }), all);
      expect(sticky.split("\n").filter((l) => l.includes("--rcheck"))).toHaveLength(nodes.length);
      expect(sticky.split("\n").filter((l) => / --set --rsource$/.test(l))).toHaveLength(nodes.length);
    }
    expect(azureIptables(world(), healthy(...nodes.map((n) => n.ip)))).not.toContain("recent");
  });
});
