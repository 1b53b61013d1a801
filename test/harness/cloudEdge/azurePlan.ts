// The emulated Azure Standard Load Balancer's data path, as pure functions of what ARM holds (load-balancing
// rules, frontends, backend pools, probes, and the network security groups on the backends' subnets) and of the
// probes' verdicts (checkPlan.ts). Nothing here does I/O.
//
// As Azure documents it: a rule takes new flows to its frontend address, protocol and port and spreads them over
// the pool members that pass its probe (all members when the rule has no probe; with SourceIP distribution, a
// client's flows to one of them); with none passing, new flows are
// dropped while established ones continue. Without floating IP the destination becomes the member's address and
// backend port; with it the destination is left alone and the packet is routed to the member, which must own the
// frontend address (kube-proxy does, for a Service's load-balancer IP). Whatever no rule takes is dropped. The NSG
// of the member's subnet judges each new flow as Azure does, by priority, first match deciding, then Azure's
// default rules (AllowVnetInBound, DenyAllInBound), with the client's own source address; replies are allowed (NSGs
// are stateful).
import { Address4 } from "ip-address";
import { shortHash, stateKey, type EdgeHealthCheck, type TargetState } from "./checkPlan.ts";
import { LAN_CIDR } from "./addresses.ts";
import { spreadRules, stickySpreadRules } from "./spread.ts";
import { IDLE_FILTER, idleMangleRules } from "./azureIdle.ts";

export interface AzureEdgeRule {
  /** The rule's resource ID. */
  id: string;
  /** The frontend's address (a public IP's, or the private one from its subnet). */
  frontend: string;
  protocol: "Tcp" | "Udp" | "All";
  /** 0 with protocol All: every port (HA ports). */
  frontendPort: number;
  backendPort: number;
  floatingIP: boolean;
  /** How long a TCP flow may carry nothing before the load balancer forgets it (azureIdle.ts). */
  idleTimeoutMinutes: number;
  /** Whether a packet of a forgotten flow is answered with a reset rather than dropped. */
  tcpReset: boolean;
  /** loadDistribution SourceIP or SourceIPProtocol: a client's flows go to one member (Default spreads them). */
  sourceAffinity: boolean;
  /** The checked group (azureGroupId) its flows go to. */
  group: string;
}

/** A backend pool's members as one probe sees them on one backend port. */
export interface AzureEdgeGroup {
  id: string;
  /** Undefined for a rule without a probe: every member counts as passing. */
  probe?: EdgeHealthCheck;
  targets: { ip: string; port: number }[];
}

export interface AzureNsgRule {
  priority: number;
  access: "Allow" | "Deny";
  /** "Tcp", "Udp", "Icmp", "*" ... as ARM has it. */
  protocol: string;
  /** Prefixes, addresses, "*", or service tags (Internet, VirtualNetwork, AzureLoadBalancer). */
  sources: string[];
  destinations: string[];
  /** "80", "1000-2000" or "*". */
  ports: string[];
}

/** A network security group and the subnet prefixes it guards (inbound rules only). */
export interface AzureEdgeNsg {
  id: string;
  rules: AzureNsgRule[];
  guards: string[];
}

export interface AzureEdgeState {
  rules: AzureEdgeRule[];
  groups: ReadonlyMap<string, AzureEdgeGroup>;
  nsgs: AzureEdgeNsg[];
  /** The VirtualNetwork service tag: the address spaces of the virtual networks. */
  virtualNetwork: string[];
}

export const azureGroupId = (poolId: string, probeId: string | undefined, backendPort: number) =>
  `${poolId}|${probeId ?? "no probe"}|${backendPort}`;

/** The members of a group new flows may go to: those passing its probe (every one without a probe). */
export function passing(
  group: AzureEdgeGroup,
  states: ReadonlyMap<string, TargetState>,
): AzureEdgeGroup["targets"] {
  if (!group.probe) return group.targets;
  return group.targets.filter((t) => states.get(stateKey(group.id, t)) === "healthy");
}

/**
 * What ARM's per-rule health says when the edge is the prober: each rule's members Up when they pass its probe
 * (the members new flows go to), Down otherwise — rule ID → member address → state.
 */
export function ruleHealthReport(
  state: AzureEdgeState,
  states: ReadonlyMap<string, TargetState>,
): Record<string, Record<string, "Up" | "Down">> {
  const report: Record<string, Record<string, "Up" | "Down">> = {};
  for (const rule of state.rules) {
    const group = state.groups.get(rule.group);
    if (!group) continue;
    const up = new Set(passing(group, states).map((t) => t.ip));
    report[rule.id] = Object.fromEntries(group.targets.map((t) => [t.ip, up.has(t.ip) ? "Up" : "Down"]));
  }
  return report;
}

/**
 * The members that floating-IP rules route to, each with its firewall mark and routing table (mark 0x100 + i,
 * table 100 + i): the edge routes a marked packet to its member unchanged.
 */
export function floatingMembers(state: AzureEdgeState): { ip: string; mark: number; table: number }[] {
  const ips = new Set<string>();
  for (const rule of state.rules.filter((r) => r.floatingIP))
    for (const t of state.groups.get(rule.group)?.targets ?? []) ips.add(t.ip);
  return [...ips].sort().map((ip, i) => ({ ip, mark: 0x100 + i, table: 100 + i }));
}

/** iptables-restore input for the edge's mangle, nat and filter tables. */
export function azureIptables(state: AzureEdgeState, states: ReadonlyMap<string, TargetState>): string {
  const marks = new Map(floatingMembers(state).map((m) => [m.ip, m.mark]));
  const mangleChains: string[] = [];
  const mangle: string[] = [];
  const natChains: string[] = [];
  const nat: string[] = [];
  const rules = [...state.rules].sort((a, b) => a.id.localeCompare(b.id));
  for (const rule of rules) {
    const group = state.groups.get(rule.group);
    const members = group ? passing(group, states) : [];
    for (const protocol of kernelProtocols(rule.protocol)) {
      const match = `-d ${rule.frontend}/32 -p ${protocol}${rule.frontendPort ? ` --dport ${rule.frontendPort}` : ""}`;
      const chain = `AZ-${shortHash(`${rule.id}|${protocol}`)}`.toUpperCase();
      if (!members.length) {
        mangle.push(`-A AZ-RULES ${match} -j DROP`);
        continue;
      }
      if (rule.floatingIP) {
        mangleChains.push(`:${chain} - [0:0]`);
        mangle.push(`-A AZ-RULES ${match} -j ${chain}`);
        const mark = (i: number) => `-j MARK --set-mark ${marks.get(members[i]!.ip)}`;
        const spread = spreadOver(rule, chain, "-m mark --mark 0", members, mark);
        mangleChains.push(...spread.chains);
        mangle.push(...spread.rules);
        mangle.push(`-A ${chain} -j CONNMARK --save-mark`, `-A ${chain} -j ACCEPT`);
      } else {
        mangle.push(`-A AZ-RULES ${match} -j ACCEPT`);
        natChains.push(`:${chain} - [0:0]`);
        nat.push(`-A AZ-RULES ${match} -j ${chain}`);
        // HA ports keep the client's port; otherwise the rule's backend port.
        const dnat = (i: number) =>
          `-j DNAT --to-destination ${members[i]!.ip}${rule.frontendPort ? `:${members[i]!.port}` : ""}`;
        const spread = spreadOver(rule, chain, `-p ${protocol}`, members, dnat);
        natChains.push(...spread.chains);
        nat.push(...spread.rules);
      }
    }
  }
  // What no rule takes, Azure drops.
  for (const frontend of [...new Set(rules.map((r) => r.frontend))].sort())
    mangle.push(`-A AZ-RULES -d ${frontend}/32 -j DROP`);

  return [
    "*mangle",
    ":PREROUTING ACCEPT [0:0]",
    ":AZ-RULES - [0:0]",
    ...mangleChains,
    // A floating flow's later packets keep the member it was given; replies (to the edge's own address) are
    // left unmarked, so they are delivered here and their translation undone.
    "-A PREROUTING -m conntrack --ctdir ORIGINAL -j CONNMARK --restore-mark",
    "-A PREROUTING -m conntrack --ctstate NEW -j AZ-RULES",
    ...mangle,
    ...idleMangleRules(rules),
    "COMMIT",
    "*nat",
    ":PREROUTING ACCEPT [0:0]",
    ":INPUT ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":POSTROUTING ACCEPT [0:0]",
    ":AZ-RULES - [0:0]",
    ...natChains,
    "-A PREROUTING -j AZ-RULES",
    ...nat,
    // Azure's load balancer passes the client's address through. A client on the nodes' own LAN would be
    // answered directly, past the edge, so its flows leave with the edge's address; clients elsewhere (the
    // internet client behind the edge, whose replies the nodes route back through it) keep theirs.
    `-A POSTROUTING -s ${LAN_CIDR} -m conntrack --ctstate DNAT -j MASQUERADE`,
    `-A POSTROUTING -s ${LAN_CIDR} -m connmark ! --mark 0 -j MASQUERADE`,
    "COMMIT",
    ...nsgFilter(state, marks, IDLE_FILTER),
    "",
  ].join("\n");
}

/** A rule's new flows over its members: evenly, or with source-IP affinity (one list per rule and member). */
function spreadOver(
  rule: AzureEdgeRule,
  chain: string,
  match: string,
  members: AzureEdgeGroup["targets"],
  action: (i: number) => string,
): { chains: string[]; rules: string[] } {
  if (!rule.sourceAffinity) return { chains: [], rules: spreadRules(chain, match, members.length, action) };
  const key = (i: number) => `${rule.id}|${members[i]!.ip}:${members[i]!.port}`;
  return stickySpreadRules(chain, match, members.length, key, action);
}

/**
 * The filter table: each new flow the edge forwards meets the NSG of its member's subnet (by destination without
 * floating IP, by the member's mark with it); established flows and replies pass; packets of flows forgotten
 * when idle and marked for a reset get it (azureIdle.ts).
 */
function nsgFilter(
  state: AzureEdgeState,
  marks: ReadonlyMap<string, number>,
  idle: readonly string[],
): string[] {
  const chains: string[] = [];
  const rules: string[] = [];
  for (const nsg of [...state.nsgs].sort((a, b) => a.id.localeCompare(b.id))) {
    const chain = `NSG-${shortHash(nsg.id)}`.toUpperCase();
    chains.push(`:${chain} - [0:0]`);
    for (const prefix of [...nsg.guards].sort()) {
      if (prefix.includes(":")) continue;
      rules.push(`-A AZ-NSG -m mark --mark 0 -d ${prefix} -j ${chain}`);
      for (const [ip, mark] of marks)
        if (inPrefix(ip, prefix)) rules.push(`-A AZ-NSG -m mark --mark ${mark} -j ${chain}`);
    }
    const ordered = [...nsg.rules, ...DEFAULT_RULES].sort((a, b) => a.priority - b.priority);
    for (const rule of ordered) {
      const verdict = rule.access === "Allow" ? "ACCEPT" : "DROP";
      const sources = addressMatches(rule.sources, state.virtualNetwork, "-s");
      const destinations = addressMatches(rule.destinations, state.virtualNetwork, "-d");
      for (const proto of protocolMatches(rule.protocol, rule.ports))
        for (const dst of destinations) {
          for (const src of sources) {
            const match = [src, dst, proto].filter(Boolean).join(" ");
            if (src !== "INTERNET") {
              rules.push(`-A ${chain}${match ? ` ${match}` : ""} -j ${verdict}`);
              continue;
            }
            // Internet: every source outside the virtual networks, so those return before the verdict.
            const internet = `${chain}-${rule.priority}-I`.slice(0, 28);
            if (!chains.includes(`:${internet} - [0:0]`)) {
              chains.push(`:${internet} - [0:0]`);
              for (const p of state.virtualNetwork.filter((v) => !v.includes(":")))
                rules.push(`-A ${internet} -s ${p} -j RETURN`);
              rules.push(`-A ${internet} -j ${verdict}`);
            }
            const rest = [dst, proto].filter(Boolean).join(" ");
            rules.push(`-A ${chain}${rest ? ` ${rest}` : ""} -j ${internet}`);
          }
        }
    }
  }
  return [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":FORWARD ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":AZ-NSG - [0:0]",
    ...chains,
    "-A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
    "-A FORWARD -m conntrack --ctstate NEW -j AZ-NSG",
    ...rules,
    ...idle,
    "COMMIT",
  ];
}

/** Azure's default inbound rules, below every rule of the group's own. */
const DEFAULT_RULES: AzureNsgRule[] = [
  {
    priority: 65000,
    access: "Allow",
    protocol: "*",
    sources: ["VirtualNetwork"],
    destinations: ["VirtualNetwork"],
    ports: ["*"],
  },
  // AllowAzureLoadBalancerInBound (65001) admits the probes, which start on the edge itself, never forwarded.
  { priority: 65500, access: "Deny", protocol: "*", sources: ["*"], destinations: ["*"], ports: ["*"] },
];

/**
 * iptables address matches for a rule's sources or destinations: "" for any, "INTERNET" for the Internet tag (a
 * chain of its own), none at all for what no forwarded packet can match (AzureLoadBalancer, other tags, IPv6).
 */
function addressMatches(prefixes: string[], virtualNetwork: string[], flag: "-s" | "-d"): string[] {
  const out = new Set<string>();
  for (const p of prefixes) {
    if (p === "*" || p === "Any" || p === "0.0.0.0/0") out.add("");
    else if (p === "Internet") out.add(flag === "-s" ? "INTERNET" : "");
    else if (p === "VirtualNetwork")
      for (const v of virtualNetwork.filter((v) => !v.includes(":"))) out.add(`${flag} ${v}`);
    else if (/^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(p)) out.add(`${flag} ${p}`);
  }
  return [...out];
}

/** iptables protocol and port matches: a port range needs a protocol, so "*" with ports is both TCP and UDP. */
function protocolMatches(protocol: string, ports: string[]): string[] {
  const p = protocol.toLowerCase();
  const anyPort = ports.length === 0 || ports.includes("*");
  if (p === "icmp") return ["-p icmp"];
  const protocols = p === "tcp" || p === "udp" ? [p] : anyPort ? [""] : ["tcp", "udp"];
  const out: string[] = [];
  for (const proto of protocols) {
    if (anyPort) out.push(proto ? `-p ${proto}` : "");
    else for (const port of ports) out.push(`-p ${proto} --dport ${port.replace("-", ":")}`);
  }
  return out;
}

function kernelProtocols(protocol: AzureEdgeRule["protocol"]): ("tcp" | "udp")[] {
  if (protocol === "All") return ["tcp", "udp"];
  return [protocol === "Udp" ? "udp" : "tcp"];
}

function inPrefix(ip: string, prefix: string): boolean {
  try {
    return new Address4(ip).isInSubnet(new Address4(prefix));
  } catch {
    return false;
  }
}
