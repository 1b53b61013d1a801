// The emulated load balancers' health checks, as pure functions: HAProxy's checker configuration for groups of
// targets probed alike (an ELBv2 target group, an Azure backend pool behind one probe), and the target's state
// from HAProxy's view. Nothing here does I/O.

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

/** Targets checked alike, under a stable ID (a target group's ARN; an Azure pool, probe and port). */
export interface CheckedGroup {
  id: string;
  healthCheck: EdgeHealthCheck;
  targets: readonly { ip: string; port: number }[];
}

/** A target's state as ELBv2's DescribeTargetHealth names it; the Azure edge uses the same three. */
export type TargetState = "initial" | "healthy" | "unhealthy";

/** HAProxy's name for a checked group's backend and a target's server: stable, and valid HAProxy identifiers. */
export const backendName = (id: string) => `tg-${shortHash(id)}`;
export const serverName = (t: { ip: string; port: number }) => `${t.ip.replace(/[.:]/g, "_")}-${t.port}`;

export function shortHash(text: string): string {
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
 * checked group (an ELBv2 target group; an Azure pool behind one probe), its servers the group's targets, probed
 * as the group says: the port (traffic-port:
 * the target's own), TCP connect or an HTTP GET of the path whose status must match, every interval, failing after
 * the timeout, up after `healthyThreshold` passes and down after `unhealthyThreshold` failures.
 */
export function haproxyConfig(
  groups: readonly CheckedGroup[],
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
  for (const group of [...groups].sort((a, b) => a.id.localeCompare(b.id))) {
    const hc = group.healthCheck;
    lines.push(`backend ${backendName(group.id)}`);
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

export const stateKey = (groupId: string, t: { ip: string; port: number }) => `${groupId}|${serverName(t)}`;
