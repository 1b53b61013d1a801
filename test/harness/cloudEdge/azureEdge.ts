// The emulated Azure load balancers' data path on the local cluster's LAN: a reconciler that reads what ARM holds
// (the Azure emulator's load balancers, public IPs, virtual networks and network security groups) about once a
// second and makes the edge carry it (azurePlan.ts): HAProxy probing every pool member as its rule's probe says,
// the kernel forwarding each rule's new flows to the members that pass, routing floating-IP flows to them
// unchanged, and the NSG on the members' subnet judging every new flow. The LAN's client reaches public frontends
// through the edge (a route in its namespace, taken away at the end) and private ones on the LAN itself.
import type { NetworkManagementClient } from "@azure/arm-network";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IP, sh } from "../netns.ts";
import { stateKey, type EdgeHealthCheck, type TargetState } from "./checkPlan.ts";
import { EdgeHost, type EdgeHostOptions } from "./edgeHost.ts";
import { HealthChecker } from "./haproxy.ts";
import { PassLoop } from "./passLoop.ts";
import { establishedFlows, ESTABLISHED_TIMEOUT_S, idleFlows, RESET_MARK } from "./azureIdle.ts";
import {
  azureGroupId,
  azureIptables,
  floatingMembers,
  ruleHealthReport,
  type AzureEdgeGroup,
  type AzureEdgeNsg,
  type AzureEdgeRule,
  type AzureEdgeState,
} from "./azurePlan.ts";

/** Where the Azure emulator takes public IP addresses from (test/emulators/azure/store.ts). */
export const PUBLIC_IP_RANGE = "198.18.0.0/15";
/** Policy-routing rule priorities: floating-IP marks first, then the edge's own addresses. */
const MARK_PRIORITY = 100;
const LOCAL_PRIORITY = 200;
/** The policy-routing rule and table that take packets marked for an idle reset to the edge itself. */
const RESET_PRIORITY = 90;
const RESET_TABLE = 90;

export interface AzureEdgeOptions extends EdgeHostOptions {
  /** The LAN's client namespace, given a route to the public frontends through the edge. */
  clientNamespace: string;
  network: NetworkManagementClient;
  /**
   * Where the probes' verdicts go after each pass, as ARM's per-rule health would tell them (the Azure emulator's
   * /_emulator/ruleHealth): Portico opens pods' readiness gates on it.
   */
  reportHealth?: (rules: Record<string, Record<string, "Up" | "Down">>) => Promise<void>;
  periodMs?: number;
}

export class AzureEdge {
  private state: AzureEdgeState = { rules: [], groups: new Map(), nsgs: [], virtualNetwork: [] };
  private states = new Map<string, TargetState>();
  private privateAddresses = new Set<string>();
  private marks = new Set<string>();
  private iptables = "";
  private loop: PassLoop | undefined;

  private readonly edge: EdgeHost;
  private readonly checker: HealthChecker;
  private readonly dir: string;
  private readonly opts: AzureEdgeOptions;

  private constructor(edge: EdgeHost, dir: string, opts: AzureEdgeOptions) {
    this.edge = edge;
    this.checker = new HealthChecker(edge, dir);
    this.dir = dir;
    this.opts = opts;
  }

  /** The internet client's namespace (behind the edge): its flows keep its address. */
  get internetClient(): string {
    return this.edge.internetNamespace;
  }

  /** The internet client's address. */
  get internetAddress(): string {
    return this.edge.site.internet.client;
  }

  static async start(opts: AzureEdgeOptions): Promise<AzureEdge> {
    const dir = await mkdtemp(join(tmpdir(), "portico-azure-edge-"));
    const edge = await EdgeHost.create(opts);
    const azure = new AzureEdge(edge, dir, opts);
    try {
      // A floating-IP flow to a private frontend (an address of the edge's own) is routed to its member by its
      // mark before the edge would take it for itself.
      await edge.exec(IP, ["rule", "add", "pref", String(LOCAL_PRIORITY), "lookup", "local"]);
      await edge.exec(IP, ["rule", "del", "pref", "0"]);
      // A packet of a flow forgotten when idle, marked for a reset, is the edge's own to answer (azureIdle.ts);
      // only those: a public frontend must not be a local address, or the nodes' floating-IP replies, which
      // come from it, would be martians here.
      await edge.exec(IP, [
        "rule",
        "add",
        "pref",
        String(RESET_PRIORITY),
        "fwmark",
        RESET_MARK,
        "lookup",
        String(RESET_TABLE),
      ]);
      await edge.exec(IP, ["route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", String(RESET_TABLE)]);
      // The namespace's own settings (the machine's are untouched): idle time is told from the flows' countdown.
      await edge.exec("sysctl", [
        "-q",
        "-w",
        `net.netfilter.nf_conntrack_tcp_timeout_established=${ESTABLISHED_TIMEOUT_S}`,
        "net.netfilter.nf_conntrack_tcp_loose=0",
      ]);
      await sh(IP, [
        "-n",
        opts.clientNamespace,
        "route",
        "replace",
        PUBLIC_IP_RANGE,
        "via",
        edge.site.address,
      ]);
    } catch (err) {
      await azure.stop();
      throw err;
    }
    azure.loop = new PassLoop(() => azure.pass(), opts.periodMs);
    return azure;
  }

  /** A pool member's state as its probe judges it, for the rule's frontend address and port. */
  stateOf(frontend: string, frontendPort: number, member: string): TargetState | undefined {
    const rule = this.state.rules.find((r) => r.frontend === frontend && r.frontendPort === frontendPort);
    const group = rule && this.state.groups.get(rule.group);
    const target = group?.targets.find((t) => t.ip === member);
    if (!group || !target) return undefined;
    return group.probe ? this.states.get(stateKey(group.id, target)) : "healthy";
  }

  /** Resolves after a full pass that began after this call (the edge has seen what ARM holds now). */
  settled(timeoutMs = 30_000): Promise<void> {
    return this.loop!.settled(timeoutMs);
  }

  /** What the edge does now, for a failing test's message. */
  describe(): string {
    return JSON.stringify(
      {
        rules: this.state.rules,
        states: Object.fromEntries(this.states),
        iptables: this.iptables,
        error: String(this.loop?.error),
      },
      null,
      1,
    );
  }

  async stop(): Promise<void> {
    this.loop?.stop();
    await sh(IP, ["-n", this.opts.clientNamespace, "route", "del", PUBLIC_IP_RANGE]).catch(() => undefined);
    await this.edge.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async pass(): Promise<void> {
    const state = await this.observe();
    const states = await this.checker.check(
      [...state.groups.values()].flatMap((g) =>
        g.probe ? [{ id: g.id, healthCheck: g.probe, targets: g.targets }] : [],
      ),
    );
    // Private frontends are answered on the LAN by the edge itself.
    const wanted = new Set(state.rules.map((r) => r.frontend).filter((a) => !inPublicRange(a)));
    for (const address of wanted)
      if (!this.privateAddresses.has(address)) await this.edge.addAddress(address);
    for (const address of this.privateAddresses)
      if (!wanted.has(address)) await this.edge.removeAddress(address);
    this.privateAddresses = wanted;
    await this.routeFloating(state);
    const rules = azureIptables(state, states);
    if (rules !== this.iptables) {
      await this.edge.exec("iptables-restore", ["-w", "5"], rules);
      this.iptables = rules;
    }
    await this.forgetIdle(state);
    // Told to ARM, and to tests, only once the forwarding follows them.
    await this.opts.reportHealth?.(ruleHealthReport(state, states));
    this.states = states;
    this.state = state;
  }

  /** Forgets the flows idle for their rule's timeout, as Azure's load balancer does. */
  private async forgetIdle(state: AzureEdgeState): Promise<void> {
    const flows = establishedFlows(await this.edge.exec("conntrack", ["-L", "-p", "tcp"]).catch(() => ""));
    for (const f of idleFlows(flows, state.rules))
      await this.edge
        .exec("conntrack", [
          ...["-D", "-p", "tcp", "--orig-src", f.src, "--orig-dst", f.dst],
          ...["--orig-port-src", f.sport, "--orig-port-dst", f.dport],
        ])
        .catch(() => "");
  }

  /** A routing table per floating-IP member (its mark's), whose only route leads to it. */
  private async routeFloating(state: AzureEdgeState): Promise<void> {
    const members = floatingMembers(state);
    const wanted = new Set(members.map((m) => `${m.mark}|${m.table}|${m.ip}`));
    for (const key of this.marks) {
      if (wanted.has(key)) continue;
      const [mark, table] = key.split("|");
      await this.edge
        .exec(IP, ["rule", "del", "pref", String(MARK_PRIORITY), "fwmark", mark!, "table", table!])
        .catch(() => "");
      await this.edge.exec(IP, ["route", "flush", "table", table!]).catch(() => "");
    }
    for (const m of members) {
      const key = `${m.mark}|${m.table}|${m.ip}`;
      if (this.marks.has(key)) continue;
      await this.edge.exec(IP, ["route", "replace", "default", "via", m.ip, "table", String(m.table)]);
      await this.edge.exec(IP, [
        "rule",
        "add",
        "pref",
        String(MARK_PRIORITY),
        "fwmark",
        String(m.mark),
        "table",
        String(m.table),
      ]);
    }
    this.marks = wanted;
  }

  private async observe(): Promise<AzureEdgeState> {
    const { network } = this.opts;
    const publicIps = new Map<string, string>();
    for await (const pip of network.publicIPAddresses.listAll())
      if (pip.id && pip.ipAddress) publicIps.set(pip.id.toLowerCase(), pip.ipAddress);
    const rules: AzureEdgeRule[] = [];
    const groups = new Map<string, AzureEdgeGroup>();
    for await (const lb of network.loadBalancers.listAll()) {
      const frontends = new Map<string, string>();
      for (const f of lb.frontendIPConfigurations ?? []) {
        const address = f.publicIPAddress?.id
          ? publicIps.get(f.publicIPAddress.id.toLowerCase())
          : f.privateIPAddress;
        if (f.id && address && !address.includes(":")) frontends.set(f.id.toLowerCase(), address);
      }
      const probes = new Map((lb.probes ?? []).map((p) => [p.id!.toLowerCase(), p]));
      const pools = new Map((lb.backendAddressPools ?? []).map((p) => [p.id!.toLowerCase(), p]));
      for (const r of lb.loadBalancingRules ?? []) {
        const frontend = frontends.get(r.frontendIPConfiguration?.id?.toLowerCase() ?? "");
        const poolId = (r.backendAddressPool?.id ?? r.backendAddressPools?.[0]?.id)?.toLowerCase();
        const pool = poolId ? pools.get(poolId) : undefined;
        if (!frontend || !pool || !r.id) continue;
        const probeId = r.probe?.id?.toLowerCase();
        const probe = probeId ? probes.get(probeId) : undefined;
        const backendPort = r.backendPort ?? r.frontendPort ?? 0;
        const id = azureGroupId(poolId!, probe ? probeId : undefined, backendPort);
        if (!groups.has(id))
          groups.set(id, {
            id,
            ...(probe ? { probe: healthCheck(probe) } : {}),
            targets: (pool.loadBalancerBackendAddresses ?? [])
              .filter((a) => a.ipAddress && !a.ipAddress.includes(":") && a.adminState !== "Down")
              .map((a) => ({ ip: a.ipAddress!, port: backendPort })),
          });
        rules.push({
          id: r.id.toLowerCase(),
          frontend,
          protocol: (r.protocol ?? "Tcp") as AzureEdgeRule["protocol"],
          frontendPort: r.frontendPort ?? 0,
          backendPort,
          floatingIP: r.enableFloatingIP === true,
          // ARM's defaults.
          idleTimeoutMinutes: r.idleTimeoutInMinutes ?? 4,
          tcpReset: r.enableTcpReset === true,
          sourceAffinity: r.loadDistribution === "SourceIP" || r.loadDistribution === "SourceIPProtocol",
          group: id,
        });
      }
    }
    const guarded = new Map<string, string[]>();
    const virtualNetwork: string[] = [];
    for await (const vnet of network.virtualNetworks.listAll()) {
      virtualNetwork.push(...(vnet.addressSpace?.addressPrefixes ?? []));
      for (const subnet of vnet.subnets ?? []) {
        const nsg = subnet.networkSecurityGroup?.id?.toLowerCase();
        if (!nsg) continue;
        const prefixes = subnet.addressPrefixes ?? (subnet.addressPrefix ? [subnet.addressPrefix] : []);
        guarded.set(nsg, [...(guarded.get(nsg) ?? []), ...prefixes]);
      }
    }
    const nsgs: AzureEdgeNsg[] = [];
    for await (const nsg of network.networkSecurityGroups.listAll()) {
      const guards = guarded.get(nsg.id?.toLowerCase() ?? "");
      if (!guards) continue;
      nsgs.push({
        id: nsg.id!.toLowerCase(),
        guards,
        rules: (nsg.securityRules ?? [])
          .filter((r) => r.direction === "Inbound")
          .map((r) => ({
            priority: r.priority ?? 4096,
            access: r.access === "Deny" ? "Deny" : "Allow",
            protocol: r.protocol ?? "*",
            sources: r.sourceAddressPrefixes?.length
              ? r.sourceAddressPrefixes
              : [r.sourceAddressPrefix ?? "*"],
            destinations: r.destinationAddressPrefixes?.length
              ? r.destinationAddressPrefixes
              : [r.destinationAddressPrefix ?? "*"],
            ports: r.destinationPortRanges?.length
              ? r.destinationPortRanges
              : [r.destinationPortRange ?? "*"],
          })),
      });
    }
    return { rules, groups, nsgs, virtualNetwork };
  }
}

/**
 * An Azure probe as the edge checks it: TCP connect, or an HTTP(S) GET of the path answered 200; every interval,
 * each attempt given the interval to answer; out of rotation after `probeThreshold` consecutive failures (without
 * one, `numberOfProbes`), back after `probeThreshold` successes (without one, the first).
 */
function healthCheck(probe: {
  protocol?: string;
  port?: number;
  requestPath?: string;
  intervalInSeconds?: number;
  numberOfProbes?: number;
  probeThreshold?: number;
}): EdgeHealthCheck {
  const interval = probe.intervalInSeconds ?? 15;
  return {
    protocol: probe.protocol === "Http" ? "HTTP" : probe.protocol === "Https" ? "HTTPS" : "TCP",
    port: String(probe.port),
    ...(probe.requestPath ? { path: probe.requestPath } : {}),
    matcher: "200",
    intervalSeconds: interval,
    timeoutSeconds: interval,
    healthyThreshold: probe.probeThreshold ?? 1,
    unhealthyThreshold: probe.probeThreshold ?? probe.numberOfProbes ?? 1,
  };
}

function inPublicRange(address: string): boolean {
  const [a, b] = address.split(".").map(Number);
  return a === 198 && (b === 18 || b === 19);
}
