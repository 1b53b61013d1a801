// The emulated NLBs' data path on the local cluster's LAN: a reconciler that reads what ELBv2 holds (the AWS
// emulator's load balancers, listeners, target groups and registered targets) about once a second and makes the
// edge carry it: each NLB's addresses on the edge, HAProxy checking every target as its target group says, and the
// kernel forwarding each listener's new flows to the healthy targets. Clients on the LAN then reach the pods through
// the NLB Portico configured, and a target that fails its health check stops getting traffic.
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type ElasticLoadBalancingV2Client,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { DescribeInstancesCommand, DescribeSecurityGroupsCommand, type EC2Client } from "@aws-sdk/client-ec2";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EdgeHost, NLB_ADDRESSES, type EdgeHostOptions } from "./edgeHost.ts";
import { HealthChecker } from "./haproxy.ts";
import { PassLoop } from "./passLoop.ts";
import { stateKey, type TargetState } from "./checkPlan.ts";
import type { EdgeIngressRule, EdgeLoadBalancer, EdgeTargetGroup } from "./nlbModel.ts";
import { forwardedTargets, iptablesRules } from "./nlbPlan.ts";
import { EdgeDns } from "./edgeDns.ts";
import { ListenerProxy } from "./listenerProxy.ts";
import { REGISTRATION_DELAY_MS, Registrations } from "./registration.ts";
import { proxied, type ProxiedListener } from "./proxyPlan.ts";
import { Drains, flowKey, openFlows, type DrainingTarget } from "./draining.ts";

/**
 * The NLB's idle timeout for TCP flows (ELBv2's default, in seconds), and its answer to a packet of a flow it no
 * longer tracks (idle too long, or cut at the end of a drain): a reset, as the edge's own stack answers a packet
 * that connection tracking does not know rather than translate it as a new flow.
 */
const NLB_CONNTRACK = [
  "net.netfilter.nf_conntrack_tcp_timeout_established=350",
  "net.netfilter.nf_conntrack_tcp_loose=0",
];

export interface NlbEdgeOptions extends EdgeHostOptions {
  /** How long a new target waits before it gets traffic, as ELBv2's registration does (registration.ts). */
  registrationDelayMs?: number;
  /** Namespaces whose lookups of the NLBs' DNS names go to the edge (the internet client's always do). */
  clientNamespaces?: readonly string[];
  elbv2: ElasticLoadBalancingV2Client;
  ec2: EC2Client;
  periodMs?: number;
}

export class NlbEdge {
  /**
   * The certificates the edge can present on TLS listeners: ACM ARN → PEM file (certificate and key), as the
   * harness issued and imported them (ACM never gives a key back).
   */
  readonly certificates = new Map<string, string>();
  private readonly addresses = new Map<string, string>();
  private states = new Map<string, TargetState>();
  private draining: DrainingTarget[] = [];
  private balancers: EdgeLoadBalancer[] = [];
  private groups = new Map<string, EdgeTargetGroup>();
  private rules = "";
  private loop: PassLoop | undefined;

  private readonly edge: EdgeHost;
  private readonly checker: HealthChecker;
  private readonly proxy: ListenerProxy;
  private readonly dns: EdgeDns;
  private readonly registrations: Registrations;
  private readonly drains = new Drains();
  private readonly dir: string;
  private readonly opts: NlbEdgeOptions;

  private constructor(edge: EdgeHost, checker: HealthChecker, dir: string, opts: NlbEdgeOptions) {
    this.edge = edge;
    this.checker = checker;
    this.proxy = new ListenerProxy(edge, dir);
    this.registrations = new Registrations(opts.registrationDelayMs ?? REGISTRATION_DELAY_MS);
    this.dns = new EdgeDns(edge, dir, [...(opts.clientNamespaces ?? []), edge.internetNamespace]);
    this.dir = dir;
    this.opts = opts;
  }

  static async start(opts: NlbEdgeOptions): Promise<NlbEdge> {
    const dir = await mkdtemp(join(tmpdir(), "portico-edge-"));
    const edge = await EdgeHost.create(opts);
    const nlb = new NlbEdge(edge, new HealthChecker(edge, dir), dir, opts);
    try {
      // The namespace's own settings; the machine's are untouched.
      await edge.exec("sysctl", ["-q", "-w", ...NLB_CONNTRACK]);
      await nlb.dns.start();
    } catch (err) {
      await nlb.stop();
      throw err;
    }
    nlb.loop = new PassLoop(() => nlb.pass(), opts.periodMs);
    return nlb;
  }

  /** The internet client's namespace (behind the edge): its flows keep its address. */
  get internetClient(): string {
    return this.edge.internetNamespace;
  }

  /** The internet client's address. */
  get internetAddress(): string {
    return this.edge.site.internet.client;
  }

  /** The addresses the edge answers for the NLB of this DNS name (its DNS record, as resolved). */
  addressesOf(dnsName: string): string[] {
    return this.balancers.find((lb) => lb.dnsName === dnsName)?.addresses ?? [];
  }

  /** ELBv2's state of a registered target as the edge's health checks judge it. */
  stateOf(targetGroupArn: string, target: { ip: string; port: number }): TargetState | undefined {
    return this.states.get(stateKey(targetGroupArn, target));
  }

  /** The state of a registered target by its ELBv2 ID (an instance ID or an address) and port. */
  stateOfTarget(targetGroupArn: string, id: string, port: number): TargetState | undefined {
    const target = this.groups.get(targetGroupArn)?.targets.find((t) => t.id === id && t.port === port);
    return target && this.states.get(stateKey(targetGroupArn, target));
  }

  /** The deregistered targets of a target group still draining (ELBv2 lists them until the drain ends). */
  drainingIn(targetGroupArn: string): DrainingTarget[] {
    return this.draining.filter((d) => d.group === targetGroupArn);
  }

  /** Every target behind the NLB of this DNS name, with its state as the edge's checks judge it. */
  targetsOf(dnsName: string): { id: string; port: number; state: TargetState | undefined }[] {
    const lb = this.balancers.find((b) => b.dnsName === dnsName);
    return (lb?.listeners ?? []).flatMap((l) => {
      const group = this.groups.get(l.targetGroupArn);
      return (group?.targets ?? []).map((t) => ({
        id: t.id,
        port: t.port,
        state: this.states.get(stateKey(group!.arn, t)),
      }));
    });
  }

  /** Resolves after a full pass that began after this call (the edge has seen what ELBv2 holds now). */
  settled(timeoutMs = 30_000): Promise<void> {
    return this.loop!.settled(timeoutMs);
  }

  /** What the edge does now, for a failing test's message: target states, HAProxy's view and the rules. */
  async describe(): Promise<string> {
    const stats = await this.checker.stats().catch((err: unknown) => String(err));
    return JSON.stringify(
      { states: Object.fromEntries(this.states), stats, rules: this.rules, error: String(this.loop?.error) },
      null,
      1,
    );
  }

  async stop(): Promise<void> {
    this.loop?.stop();
    await this.dns.stop();
    await this.edge.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async pass(): Promise<void> {
    const { balancers, groups } = await this.observe();
    const flows = openFlows(await this.edge.exec("conntrack", ["-L"]).catch(() => ""));
    // A drain counts the flows through its group's own listeners (another NLB may send to the same pod), and
    // those the edge's proxy opened to the target itself.
    const hasFlow = (d: DrainingTarget) => {
      const to = new Set([...frontends(balancers, d.group), flowKey(d)]);
      return flows.some((f) => f.target === flowKey(d) && to.has(f.to));
    };
    const { draining, expired } = this.drains.step(groups, Date.now(), hasFlow);
    for (const drain of expired.filter((d) => d.terminate))
      await this.cut(drain, frontends(balancers, drain.group));
    // Checks start once a target's registration is complete; until then it has no state (initial).
    const registered = [...groups.values()].flatMap((g) => g.targets.map((t) => stateKey(g.arn, t)));
    const complete = this.registrations.complete(registered, Date.now());
    const states = await this.checker.check(
      [...groups.values()].map((g) => ({
        id: g.arn,
        healthCheck: g.healthCheck,
        targets: g.targets.filter((t) => complete.has(stateKey(g.arn, t))),
      })),
    );
    const wanted = new Set(balancers.flatMap((lb) => lb.addresses));
    for (const address of wanted) await this.edge.addAddress(address);
    for (const lb of this.balancers)
      for (const address of lb.addresses) if (!wanted.has(address)) await this.edge.removeAddress(address);
    const rules = iptablesRules(balancers, groups, states);
    if (rules !== this.rules) {
      // Only the tables the rules name (mangle, nat and filter) are replaced.
      await this.edge.exec("iptables-restore", ["-w", "5"], rules);
      this.rules = rules;
    }
    await this.proxy.apply(this.proxiedListeners(balancers, groups, states));
    await this.dns.set(new Map(balancers.map((lb) => [lb.dnsName, lb.addresses])));
    // Told (to tests, and to the controller through the health report) only once the forwarding follows them.
    this.states = states;
    this.draining = draining;
    this.groups = groups;
    this.balancers = balancers;
  }

  /**
   * Cuts the flows still open to a target whose drain ended, as ELBv2's connection termination does: the kernel
   * forgets them, so the client's next packet is answered with a reset (NLB_CONNTRACK).
   */
  private async cut(target: DrainingTarget, through: readonly string[]): Promise<void> {
    for (const frontend of through) {
      const [address, port] = frontend.split(":") as [string, string];
      for (const protocol of ["tcp", "udp"])
        await this.edge
          .exec("conntrack", [
            ...["-D", "-p", protocol, "--orig-dst", address, "--orig-port-dst", port],
            ...["--reply-src", target.ip, "--reply-port-src", String(target.port)],
          ])
          // None to cut is an error to conntrack.
          .catch(() => "");
    }
  }

  private proxiedListeners(
    balancers: readonly EdgeLoadBalancer[],
    groups: ReadonlyMap<string, EdgeTargetGroup>,
    states: ReadonlyMap<string, TargetState>,
  ): ProxiedListener[] {
    return balancers.flatMap((lb) =>
      lb.listeners.flatMap((listener) => {
        const group = groups.get(listener.targetGroupArn);
        if (!group || !proxied(listener, group)) return [];
        const certificate = listener.certificateArn && this.certificates.get(listener.certificateArn);
        const targets = forwardedTargets(group, states);
        return [{ lb, listener, group, targets, ...(certificate ? { certificate } : {}) }];
      }),
    );
  }

  private async observe(): Promise<{ balancers: EdgeLoadBalancer[]; groups: Map<string, EdgeTargetGroup> }> {
    const { elbv2 } = this.opts;
    const lbs = (await elbv2.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
    const nlbs = lbs.filter((lb) => lb.Type === "network");
    const tgs = (await elbv2.send(new DescribeTargetGroupsCommand({}))).TargetGroups ?? [];
    const instances = await this.instances();
    const instanceIngress = await this.ingressRules([...instances.values()].flatMap((i) => i.groups));
    const groups = new Map<string, EdgeTargetGroup>();
    for (const tg of tgs) {
      const health = await elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tg.TargetGroupArn }));
      const targetType = tg.TargetType === "instance" ? "instance" : "ip";
      const targets = (health.TargetHealthDescriptions ?? []).flatMap((d) => {
        const id = d.Target?.Id ?? "";
        const instance = targetType === "instance" ? instances.get(id) : undefined;
        const ip = targetType === "instance" ? instance?.ip : id;
        if (!ip) return [];
        const port = d.Target?.Port ?? tg.Port ?? 0;
        // An instance's groups guard it; a pod's interface is unknown to the emulator, so nothing guards it.
        const ingress = instance && instance.groups.flatMap((g) => instanceIngress.get(g) ?? []);
        return [{ id, ip, port, ...(ingress ? { ingress } : {}) }];
      });
      const attributes = (
        await elbv2.send(new DescribeTargetGroupAttributesCommand({ TargetGroupArn: tg.TargetGroupArn }))
      ).Attributes;
      groups.set(tg.TargetGroupArn!, {
        arn: tg.TargetGroupArn!,
        protocol: tg.Protocol ?? "TCP",
        targetType,
        attributes: Object.fromEntries((attributes ?? []).map((a) => [a.Key!, a.Value ?? ""])),
        healthCheck: {
          protocol: (tg.HealthCheckProtocol ?? "TCP") as "TCP" | "HTTP" | "HTTPS",
          port: tg.HealthCheckPort ?? "traffic-port",
          ...(tg.HealthCheckPath ? { path: tg.HealthCheckPath } : {}),
          ...(tg.Matcher?.HttpCode ? { matcher: tg.Matcher.HttpCode } : {}),
          intervalSeconds: tg.HealthCheckIntervalSeconds ?? 30,
          timeoutSeconds: tg.HealthCheckTimeoutSeconds ?? 10,
          healthyThreshold: tg.HealthyThresholdCount ?? 5,
          unhealthyThreshold: tg.UnhealthyThresholdCount ?? 2,
        },
        targets,
      });
    }
    const ingress = await this.ingressRules(nlbs.flatMap((lb) => lb.SecurityGroups ?? []));
    const balancers: EdgeLoadBalancer[] = [];
    for (const lb of nlbs) {
      const listeners =
        (await elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.LoadBalancerArn }))).Listeners ??
        [];
      balancers.push({
        arn: lb.LoadBalancerArn!,
        dnsName: lb.DNSName ?? "",
        addresses: [this.addressFor(lb.LoadBalancerArn!, new Set(nlbs.map((n) => n.LoadBalancerArn!)))],
        listeners: listeners.flatMap((l) => {
          const forward = l.DefaultActions?.find((a) => a.Type === "forward");
          const arn = forward?.TargetGroupArn ?? forward?.ForwardConfig?.TargetGroups?.[0]?.TargetGroupArn;
          const certificateArn = l.Certificates?.[0]?.CertificateArn;
          return arn
            ? [
                {
                  port: l.Port!,
                  protocol: l.Protocol ?? "TCP",
                  targetGroupArn: arn,
                  ...(certificateArn ? { certificateArn } : {}),
                },
              ]
            : [];
        }),
        ...(lb.SecurityGroups?.length
          ? {
              ingress: lb.SecurityGroups.flatMap((id) => ingress.get(id) ?? []),
              securityGroups: lb.SecurityGroups,
            }
          : {}),
      });
    }
    return { balancers, groups };
  }

  /** One address per NLB, kept for its life and given back when it goes. */
  private addressFor(arn: string, living: ReadonlySet<string>): string {
    for (const gone of [...this.addresses.keys()].filter((a) => !living.has(a))) this.addresses.delete(gone);
    const known = this.addresses.get(arn);
    if (known) return known;
    const used = new Set(this.addresses.values());
    for (let n = NLB_ADDRESSES.first; n <= NLB_ADDRESSES.last; n++) {
      const address = `192.0.2.${n}`;
      if (used.has(address)) continue;
      this.addresses.set(arn, address);
      return address;
    }
    throw new Error("the edge has no NLB address left");
  }

  /** The inbound rules of these security groups, by group ID: address ranges (IPv4) and other groups. */
  private async ingressRules(ids: string[]): Promise<Map<string, EdgeIngressRule[]>> {
    const out = new Map<string, EdgeIngressRule[]>();
    if (!ids.length) return out;
    const groups =
      (await this.opts.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [...new Set(ids)] })))
        .SecurityGroups ?? [];
    for (const g of groups)
      out.set(
        g.GroupId!,
        (g.IpPermissions ?? []).flatMap((p) => {
          const base = {
            protocol: p.IpProtocol ?? "-1",
            fromPort: p.FromPort ?? 0,
            toPort: p.ToPort ?? 65535,
          };
          return [
            ...(p.IpRanges ?? []).map((r) => ({ ...base, cidr: r.CidrIp! })),
            ...(p.UserIdGroupPairs ?? []).map((pair) => ({ ...base, group: pair.GroupId! })),
          ];
        }),
      );
    return out;
  }

  /** The account's instances: their private addresses and security groups. */
  private async instances(): Promise<Map<string, { ip: string; groups: string[] }>> {
    const out = new Map<string, { ip: string; groups: string[] }>();
    const reservations = (await this.opts.ec2.send(new DescribeInstancesCommand({}))).Reservations ?? [];
    for (const r of reservations)
      for (const i of r.Instances ?? [])
        if (i.InstanceId && i.PrivateIpAddress)
          out.set(i.InstanceId, {
            ip: i.PrivateIpAddress,
            groups: (i.SecurityGroups ?? []).flatMap((g) => (g.GroupId ? [g.GroupId] : [])),
          });
    return out;
  }
}

/** The "address:port" frontends of every listener that forwards to a target group. */
function frontends(balancers: readonly EdgeLoadBalancer[], targetGroupArn: string): string[] {
  return balancers.flatMap((lb) =>
    lb.listeners
      .filter((l) => l.targetGroupArn === targetGroupArn)
      .flatMap((l) => lb.addresses.map((a) => `${a}:${l.port}`)),
  );
}
