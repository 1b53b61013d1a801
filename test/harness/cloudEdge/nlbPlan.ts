// The emulated NLB data path, as pure functions of what ELBv2 holds (moto's load balancers, listeners, target
// groups and targets) and of the targets' health as the health checkers judge it: HAProxy's checker
// configuration (one backend per target group, checks as the group describes them), ELBv2's target states from
// HAProxy's view, and the kernel's forwarding (iptables NAT rules, one chain per listener, spreading new flows
// over the healthy targets as kube-proxy does). Nothing here does I/O.

export interface EdgeHealthCheck {
  protocol: "TCP" | "HTTP" | "HTTPS";
  /** A port number as a string, or "traffic-port". */
  port: string;
  path?: string;
  /** ELBv2's matcher: codes and ranges, e.g. "200-399" or "200,302". */
  matcher?: string;
  intervalSeconds: number;
  timeoutSeconds: number;
  healthyThreshold: number;
  unhealthyThreshold: number;
}

export interface EdgeTargetGroup {
  arn: string;
  protocol: string;
  targetType: "instance" | "ip";
  healthCheck: EdgeHealthCheck;
  /** Registered targets, resolved to addresses (instance targets: the instance's private address). */
  targets: { id: string; ip: string; port: number }[];
}

export interface EdgeListener {
  port: number;
  protocol: string;
  targetGroupArn: string;
}

/** One inbound rule of a security group: a protocol's port range from a CIDR. */
export interface EdgeIngressRule {
  /** "tcp", "udp", or "-1" (every protocol). */
  protocol: string;
  fromPort: number;
  toPort: number;
  cidr: string;
}

export interface EdgeLoadBalancer {
  arn: string;
  dnsName: string;
  /** The addresses the edge answers for this NLB. */
  addresses: string[];
  listeners: EdgeListener[];
  /**
   * The inbound rules of the NLB's security groups, which admit clients as EC2 does (what none admits is dropped,
   * so the client's connection times out); undefined for an NLB without security groups, which admits everyone.
   */
  ingress?: EdgeIngressRule[];
}

/** ELBv2's target states, as DescribeTargetHealth reports them. */
export type TargetState = "initial" | "healthy" | "unhealthy";

/** HAProxy's name for a target group's backend and a target's server: stable, and valid HAProxy identifiers. */
export const backendName = (arn: string) => `tg-${shortHash(arn)}`;
export const serverName = (t: { ip: string; port: number }) => `${t.ip.replace(/[.:]/g, "_")}-${t.port}`;

function shortHash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** ELBv2's matcher as HAProxy's `http-check expect rstatus` regular expression. */
export function matcherRegex(matcher: string): string {
  const codes = matcher.split(",").flatMap((part) => {
    const [low, high = low] = part.split("-").map(Number) as [number, number?];
    const out: string[] = [];
    for (let c = low; c <= high; c++) out.push(String(c));
    return out;
  });
  return `^(${codes.join("|")})$`;
}

/**
 * HAProxy's configuration: checkers only (no frontend carries traffic: the kernel forwards), one backend per
 * target group, its servers the registered targets, probed as the target group says: the port (traffic-port:
 * the target's own), TCP connect or an HTTP GET of the path whose status must match, every interval, failing after
 * the timeout, up after `healthyThreshold` passes and down after `unhealthyThreshold` failures.
 */
export function haproxyConfig(
  groups: readonly EdgeTargetGroup[],
  files: { socket: string; stateFile: string },
): string {
  const lines = [
    "global",
    `  stats socket ${files.socket} mode 600 level admin`,
    `  server-state-file ${files.stateFile}`,
    "defaults",
    "  mode tcp",
    "  timeout connect 5s",
    "  timeout client 30s",
    "  timeout server 30s",
    "  load-server-state-from-file global",
  ];
  for (const group of [...groups].sort((a, b) => a.arn.localeCompare(b.arn))) {
    const hc = group.healthCheck;
    lines.push(`backend ${backendName(group.arn)}`);
    if (hc.protocol === "TCP") lines.push("  option tcp-check");
    else {
      lines.push(`  option httpchk GET ${hc.path ?? "/"}`);
      lines.push(`  http-check expect rstatus ${matcherRegex(hc.matcher ?? "200-399")}`);
    }
    lines.push(`  timeout check ${hc.timeoutSeconds}s`);
    const ssl = hc.protocol === "HTTPS" ? " check-ssl verify none" : "";
    lines.push(
      `  default-server inter ${hc.intervalSeconds}s fall ${hc.unhealthyThreshold} rise ${hc.healthyThreshold}${ssl}`,
    );
    for (const t of [...group.targets].sort((a, b) => serverName(a).localeCompare(serverName(b)))) {
      const port = hc.port === "traffic-port" ? "" : ` port ${hc.port}`;
      lines.push(`  server ${serverName(t)} ${t.ip}:${t.port} check${port}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** One line of HAProxy's `show stat` for a server, the fields read here. */
export interface ServerStat {
  backend: string;
  server: string;
  /** e.g. "UP", "DOWN", "UP 1/3" (going down), "DOWN 1/2" (going up), "MAINT". */
  status: string;
  /** e.g. "INI" (no check finished yet), "L4OK", "L7OK", "L4CON", "L7STS". */
  checkStatus: string;
}

/** Parses HAProxy's `show stat` CSV (the header names the columns). */
export function parseStat(csv: string): ServerStat[] {
  const [header, ...rows] = csv.trim().split("\n");
  if (!header?.startsWith("# ")) return [];
  const names = header.slice(2).split(",");
  const col = (name: string) => names.indexOf(name);
  const [px, sv, st, cs] = [col("pxname"), col("svname"), col("status"), col("check_status")];
  return (
    rows
      .map((row) => row.split(","))
      .filter((f) => f[sv] !== "BACKEND" && f[sv] !== "FRONTEND")
      // "* " marks a check under way; the status is the last one's.
      .map((f) => ({
        backend: f[px]!,
        server: f[sv]!,
        status: f[st]!,
        checkStatus: (f[cs] ?? "").replace(/^\* /, ""),
      }))
  );
}

/**
 * A target's ELBv2 state from HAProxy's view. HAProxy assumes a new server up before its first check; ELBv2 keeps
 * a new target `initial` until it has passed its healthy threshold, so servers new to HAProxy are forced down
 * (haproxy.ts) and count as initial until their first verdict.
 */
export function targetState(stat: ServerStat | undefined, everUp: boolean): TargetState {
  if (!stat || stat.status === "MAINT") return "initial";
  // No check yet in this HAProxy: a target known from before a reload keeps the verdict its saved state carries.
  if (stat.checkStatus === "INI" && !everUp) return "initial";
  if (stat.status.startsWith("UP")) return "healthy";
  return everUp || !stat.status.startsWith("DOWN ") ? "unhealthy" : "initial";
}

/**
 * The kernel's forwarding for every listener, as iptables-restore input for the edge's nat table: new flows to an
 * NLB address and listener port are spread evenly over the healthy targets (or, as ELBv2 fails open, over all of
 * them when none is healthy), and leave with the edge's own source address so replies come back through it.
 */
export function iptablesRules(
  balancers: readonly EdgeLoadBalancer[],
  groups: ReadonlyMap<string, EdgeTargetGroup>,
  states: ReadonlyMap<string, TargetState>,
): string {
  const chains: string[] = [];
  const rules: string[] = [];
  for (const lb of [...balancers].sort((a, b) => a.arn.localeCompare(b.arn))) {
    for (const listener of lb.listeners) {
      const group = groups.get(listener.targetGroupArn);
      if (!group) continue;
      const healthy = group.targets.filter((t) => states.get(stateKey(group.arn, t)) === "healthy");
      const targets = healthy.length ? healthy : group.targets;
      const protocols = kernelProtocols(listener);
      // No target registered: no rule, so the edge itself refuses the connection, as an NLB resets it.
      if (!targets.length) continue;
      for (const protocol of protocols) {
        const chain = `EDGE-${shortHash(`${lb.arn}|${listener.port}|${protocol}`)}`.toUpperCase();
        chains.push(`:${chain} - [0:0]`);
        for (const address of lb.addresses)
          rules.push(
            `-A EDGE-LISTENERS -d ${address}/32 -p ${protocol} --dport ${listener.port} -j ${chain}`,
          );
        targets.forEach((t, i) => {
          const left = targets.length - i;
          const pick = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(10)}` : "";
          rules.push(`-A ${chain} -p ${protocol}${pick} -j DNAT --to-destination ${t.ip}:${t.port}`);
        });
      }
    }
  }
  return [
    ...securityGroupRules(balancers),
    "*nat",
    ":PREROUTING ACCEPT [0:0]",
    ":INPUT ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":POSTROUTING ACCEPT [0:0]",
    ":EDGE-LISTENERS - [0:0]",
    ...chains,
    "-A PREROUTING -j EDGE-LISTENERS",
    ...rules,
    "-A POSTROUTING -m conntrack --ctstate DNAT -j MASQUERADE",
    "COMMIT",
    "",
  ].join("\n");
}

/**
 * The NLBs' security groups, as iptables-restore input for the edge's mangle table (before any address is
 * translated): for each address and listener, the sources some inbound rule admits return, everything else is
 * dropped. Replies come back to the edge's own address, so they never meet these rules.
 */
function securityGroupRules(balancers: readonly EdgeLoadBalancer[]): string[] {
  const rules: string[] = [];
  for (const lb of [...balancers].sort((a, b) => a.arn.localeCompare(b.arn))) {
    if (!lb.ingress) continue;
    for (const listener of lb.listeners) {
      const protocols = kernelProtocols(listener);
      for (const protocol of protocols) {
        const admitting = lb.ingress.filter(
          (r) =>
            (r.protocol === "-1" || r.protocol === protocol) &&
            (r.protocol === "-1" || (r.fromPort <= listener.port && listener.port <= r.toPort)),
        );
        for (const address of lb.addresses) {
          const match = `-d ${address}/32 -p ${protocol} --dport ${listener.port}`;
          for (const cidr of [...new Set(admitting.map((r) => r.cidr))]
            .filter((c) => !c.includes(":"))
            .sort())
            rules.push(`-A EDGE-SECURITY-GROUPS ${match} -s ${cidr} -j RETURN`);
          rules.push(`-A EDGE-SECURITY-GROUPS ${match} -j DROP`);
        }
      }
    }
  }
  return [
    "*mangle",
    ":PREROUTING ACCEPT [0:0]",
    ":EDGE-SECURITY-GROUPS - [0:0]",
    "-A PREROUTING -j EDGE-SECURITY-GROUPS",
    ...rules,
    "COMMIT",
  ];
}

/** The kernel's protocols a listener takes: a TCP_UDP listener both. */
function kernelProtocols(listener: EdgeListener): ("tcp" | "udp")[] {
  if (listener.protocol === "TCP_UDP") return ["tcp", "udp"];
  return [listener.protocol === "UDP" ? "udp" : "tcp"];
}

export const stateKey = (groupArn: string, t: { ip: string; port: number }) => `${groupArn}|${serverName(t)}`;
