// The emulated NLB edge's pure parts: HAProxy's checks as the target group describes them, ELBv2's target states
// from HAProxy's view, and the kernel's forwarding to the healthy targets (to all of them, as ELBv2
// fails open when every target fails; none before a target has passed, or when nothing is registered).
import { describe, expect, it } from "vitest";
import {
  backendName,
  haproxyConfig,
  matcherRegex,
  parseStat,
  stateKey,
  targetState,
  type TargetState,
} from "../harness/cloudEdge/checkPlan.ts";
import {
  preservesClientIp,
  type EdgeIngressRule,
  type EdgeTargetGroup,
} from "../harness/cloudEdge/nlbModel.ts";
import { admits } from "../harness/cloudEdge/targetSecurity.ts";
import { iptablesRules } from "../harness/cloudEdge/nlbPlan.ts";
import { proxied, proxyConfig } from "../harness/cloudEdge/proxyPlan.ts";
import { Registrations } from "../harness/cloudEdge/registration.ts";
import { rewriteTargetHealth } from "../harness/cloudEdge/healthReport.ts";
import { targetGroup } from "./support/edge.ts";

const group = targetGroup;
const files = { socket: "/run/h.sock", stateFile: "/run/h.state" };
const checked = (g: EdgeTargetGroup) => ({ id: g.arn, healthCheck: g.healthCheck, targets: g.targets });

describe("HAProxy's checks", () => {
  it("checks every target as the target group says: TCP on the traffic port, interval and thresholds", () => {
    const cfg = haproxyConfig([checked(group())], files);
    expect(cfg).toContain(`backend ${backendName("arn:tg/a")}\n  option tcp-check\n  timeout check 10s`);
    expect(cfg).toContain("default-server inter 10s fall 3 rise 3");
    expect(cfg).toContain("server 10_244_0_5-8080 10.244.0.5:8080 check\n");
    expect(cfg).toContain("stats socket /run/h.sock");
  });

  it("HTTP checks GET the path on the health-check port and expect the matcher's codes", () => {
    const hc = {
      ...group().healthCheck,
      protocol: "HTTP" as const,
      port: "32000",
      path: "/healthz",
      matcher: "200-202,302",
    };
    const cfg = haproxyConfig([checked(group({ healthCheck: hc }))], files);
    expect(cfg).toContain("option httpchk GET /healthz");
    expect(cfg).toContain("http-check expect rstatus ^(200|201|202|302)$");
    expect(cfg).toContain("10.244.0.5:8080 check port 32000");
    expect(matcherRegex("200")).toBe("^(200)$");
  });
});

describe("ELBv2's target states from HAProxy's", () => {
  const csv = [
    "# pxname,svname,qcur,status,check_status",
    "tg-1,a,0,UP,L4OK",
    "tg-1,b,0,DOWN,L4TOUT",
    "tg-1,c,0,UP,* INI",
    "tg-1,BACKEND,0,UP,",
  ].join("\n");
  it("reads servers from `show stat`, by the header's column names", () => {
    expect(parseStat(csv)).toEqual([
      { backend: "tg-1", server: "a", status: "UP", checkStatus: "L4OK" },
      { backend: "tg-1", server: "b", status: "DOWN", checkStatus: "L4TOUT" },
      { backend: "tg-1", server: "c", status: "UP", checkStatus: "INI" },
    ]);
  });
  it("initial before a verdict, healthy when up, unhealthy when down", () => {
    const [a, b, c] = parseStat(csv);
    expect(targetState(a, true)).toBe("healthy");
    expect(targetState(b, false)).toBe("unhealthy");
    expect(targetState(c, false)).toBe("initial");
    // Reloaded: a target up before keeps its verdict until its first check in the new HAProxy.
    expect(targetState(c, true)).toBe("healthy");
    expect(targetState(undefined, false)).toBe("initial");
    expect(targetState({ ...b!, status: "DOWN 1/2" }, false)).toBe("initial");
    expect(targetState({ ...b!, status: "DOWN 1/2" }, true)).toBe("unhealthy");
  });
});

describe("the kernel's forwarding", () => {
  const lb = {
    arn: "arn:lb/x",
    dnsName: "x.elb",
    addresses: ["192.0.2.200"],
    listeners: [{ port: 80, protocol: "TCP", targetGroupArn: "arn:tg/a" }],
  };
  const g = group();
  const states = (a: TargetState, b: TargetState) =>
    new Map([
      [stateKey(g.arn, g.targets[0]!), a],
      [stateKey(g.arn, g.targets[1]!), b],
    ]);
  const dnats = (rules: string) => rules.split("\n").filter((l) => l.includes("--to-destination"));

  it("spreads new flows evenly over the healthy targets only", () => {
    const rules = iptablesRules([lb], new Map([[g.arn, g]]), states("healthy", "healthy"));
    expect(rules).toContain("-A EDGE-LISTENERS -d 192.0.2.200/32 -p tcp --dport 80 -j EDGE-");
    const lines = dnats(rules);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/--probability 0\.5000000000 -j DNAT --to-destination 10\.244\.0\.5:8080$/);
    expect(lines[1]).toMatch(/-p tcp -j DNAT --to-destination 10\.244\.1\.5:8080$/);
    expect(rules).toContain("-A POSTROUTING -s 192.0.2.0/24 -m conntrack --ctstate DNAT -j MASQUERADE");
    expect(dnats(iptablesRules([lb], new Map([[g.arn, g]]), states("healthy", "unhealthy")))).toEqual([
      expect.stringMatching(/-p tcp -j DNAT --to-destination 10\.244\.0\.5:8080$/),
    ]);
  });

  it("fails open when every target fails its checks; sends nowhere before any has passed, or when none is registered", () => {
    expect(dnats(iptablesRules([lb], new Map([[g.arn, g]]), states("unhealthy", "unhealthy")))).toHaveLength(
      2,
    );
    expect(dnats(iptablesRules([lb], new Map([[g.arn, g]]), states("unhealthy", "initial")))).toEqual([]);
    expect(dnats(iptablesRules([lb], new Map([[g.arn, g]]), states("initial", "initial")))).toEqual([]);
    const empty = group({ targets: [] });
    const rules = iptablesRules([lb], new Map([[g.arn, empty]]), new Map());
    expect(dnats(rules)).toEqual([]);
    expect(rules).not.toContain("192.0.2.200");
  });

  it("keeps the client's address as ELBv2 does per target type, protocol and attribute; else connects from the NLB's", () => {
    const fromNlb = (over: Partial<EdgeTargetGroup>) => {
      const tg = group(over);
      const rules = iptablesRules([lb], new Map([[tg.arn, tg]]), states("healthy", "healthy"));
      const marked = rules.includes("-j MARK --set-mark 0x1");
      const snat = rules.includes(
        "-A POSTROUTING -m mark --mark 0x1 -m conntrack --ctorigdst 192.0.2.200/32 -j SNAT --to-source 192.0.2.200",
      );
      expect(marked).toBe(snat);
      return marked;
    };
    // ip targets behind TCP (or TLS): the NLB's address unless the attribute turns preservation on.
    expect(fromNlb({ targetType: "ip" })).toBe(true);
    expect(fromNlb({ targetType: "ip", protocol: "TLS" })).toBe(true);
    expect(fromNlb({ targetType: "ip", attributes: { "preserve_client_ip.enabled": "true" } })).toBe(false);
    // Instance targets: the client's, unless turned off.
    expect(fromNlb({ targetType: "instance" })).toBe(false);
    expect(fromNlb({ targetType: "instance", attributes: { "preserve_client_ip.enabled": "false" } })).toBe(
      true,
    );
    // UDP and TCP_UDP: always the client's (ELBv2 does not let it be turned off).
    expect(fromNlb({ targetType: "ip", protocol: "UDP" })).toBe(false);
    expect(
      fromNlb({
        targetType: "ip",
        protocol: "TCP_UDP",
        attributes: { "preserve_client_ip.enabled": "false" },
      }),
    ).toBe(false);
    expect(preservesClientIp(group({ targetType: "ip", protocol: "UDP" }))).toBe(true);
  });

  it("source-IP stickiness sends a known client back to its target while that target is forwarded to", () => {
    const tg = group({ attributes: { "stickiness.enabled": "true", "stickiness.type": "source_ip" } });
    const both = iptablesRules([lb], new Map([[tg.arn, tg]]), states("healthy", "healthy")).split("\n");
    const checks = both.filter((l) => l.includes("--rcheck"));
    expect(checks).toHaveLength(2);
    // The known clients are checked before any new flow is spread.
    const firstSpread = both.findIndex((l) => l.includes("--probability"));
    expect(both.findIndex((l) => l.includes("--rcheck"))).toBeLessThan(firstSpread);
    // Each target's chain remembers the client, then translates to that target.
    const chain = /-j (EDGE-\S+)$/.exec(checks[0]!)![1]!;
    expect(both.filter((l) => l.startsWith(`-A ${chain} `))).toEqual([
      expect.stringMatching(/-m recent --name st[0-9a-f]{8} --set --rsource$/),
      `-A ${chain} -p tcp -j DNAT --to-destination 10.244.0.5:8080`,
    ]);
    // A target that fails its checks is not returned to: its clients are spread afresh.
    const one = iptablesRules([lb], new Map([[tg.arn, tg]]), states("healthy", "unhealthy"));
    expect(one.split("\n").filter((l) => l.includes("--rcheck"))).toHaveLength(1);
    expect(iptablesRules([lb], new Map([[g.arn, g]]), states("healthy", "healthy"))).not.toContain("recent");
  });

  it("a TCP_UDP listener forwards both protocols", () => {
    const both = { ...lb, listeners: [{ port: 53, protocol: "TCP_UDP", targetGroupArn: g.arn }] };
    const rules = iptablesRules([both], new Map([[g.arn, g]]), states("healthy", "healthy"));
    expect(rules).toContain("-p tcp --dport 53");
    expect(rules).toContain("-p udp --dport 53");
  });
});

describe("DescribeTargetHealth from the edge's checks", () => {
  const answer =
    "<DescribeTargetHealthResponse><DescribeTargetHealthResult><TargetHealthDescriptions><member><Target><Id>10.0.0.5</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>healthy</State></TargetHealth></member><member><Target><Id>10.0.0.6</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>healthy</State></TargetHealth></member><member><Target><Id>10.0.0.7</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>healthy</State></TargetHealth></member></TargetHealthDescriptions></DescribeTargetHealthResult></DescribeTargetHealthResponse>";
  it("replaces each target's state with the edge's, with ELBv2's reasons; one not judged yet is initial", () => {
    const states: Record<string, TargetState> = { "10.0.0.5": "healthy", "10.0.0.6": "unhealthy" };
    const out = rewriteTargetHealth(answer, (id, port) => (port === 8080 ? states[id] : undefined));
    expect(out).toContain(
      "<Id>10.0.0.5</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>healthy</State></TargetHealth>",
    );
    expect(out).toContain(
      "<Id>10.0.0.6</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>unhealthy</State><Reason>Target.FailedHealthChecks</Reason>",
    );
    expect(out).toContain(
      "<Id>10.0.0.7</Id><Port>8080</Port></Target><HealthCheckPort>traffic-port</HealthCheckPort><TargetHealth><State>initial</State><Reason>Elb.InitialHealthChecking</Reason>",
    );
    expect(out.match(/<member>/g)).toHaveLength(3);
  });
});

describe("the NLB's security groups", () => {
  const g = group();
  const lb = {
    arn: "arn:lb/x",
    dnsName: "x.elb",
    addresses: ["192.0.2.200"],
    listeners: [{ port: 80, protocol: "TCP", targetGroupArn: g.arn }],
  };
  const groups = new Map([[g.arn, g]]);
  const security = (rules: string) =>
    rules.split("\n").filter((l) => l.startsWith("-A EDGE-SECURITY-GROUPS"));

  it("admit the sources an inbound rule covering the listener allows, and drop the rest", () => {
    const rules = iptablesRules(
      [
        {
          ...lb,
          ingress: [
            { protocol: "tcp", fromPort: 80, toPort: 80, cidr: "192.0.2.2/32" },
            { protocol: "tcp", fromPort: 443, toPort: 443, cidr: "198.51.100.0/24" },
            { protocol: "-1", fromPort: 0, toPort: 0, cidr: "203.0.113.0/24" },
            { protocol: "tcp", fromPort: 80, toPort: 80, cidr: "2001:db8::/32" },
          ],
        },
      ],
      groups,
      new Map(),
    );
    expect(rules.startsWith("*mangle\n")).toBe(true);
    expect(security(rules)).toEqual([
      "-A EDGE-SECURITY-GROUPS -d 192.0.2.200/32 -p tcp --dport 80 -s 192.0.2.2/32 -j RETURN",
      "-A EDGE-SECURITY-GROUPS -d 192.0.2.200/32 -p tcp --dport 80 -s 203.0.113.0/24 -j RETURN",
      "-A EDGE-SECURITY-GROUPS -d 192.0.2.200/32 -p tcp --dport 80 -j DROP",
    ]);
  });

  it("an NLB without security groups admits everyone; one whose groups admit nobody drops everything", () => {
    expect(security(iptablesRules([lb], groups, new Map()))).toEqual([]);
    expect(security(iptablesRules([{ ...lb, ingress: [] }], groups, new Map()))).toEqual([
      "-A EDGE-SECURITY-GROUPS -d 192.0.2.200/32 -p tcp --dport 80 -j DROP",
    ]);
  });
});

describe("the targets' own security groups", () => {
  const lb = {
    arn: "arn:lb/x",
    dnsName: "x.elb",
    addresses: ["192.0.2.200"],
    listeners: [{ port: 80, protocol: "TCP", targetGroupArn: "arn:tg/i" }],
    securityGroups: ["sg-nlb"],
  };
  const instances = (ingress?: EdgeIngressRule[]): EdgeTargetGroup => ({
    ...group({ arn: "arn:tg/i", targetType: "instance" }),
    healthCheck: { ...group().healthCheck, protocol: "HTTP", port: "31000", path: "/healthz" },
    targets: [{ id: "i-1", ip: "192.0.2.11", port: 30080, ...(ingress ? { ingress } : {}) }],
  });
  const filter = (g: EdgeTargetGroup) =>
    iptablesRules([lb], new Map([[g.arn, g]]), new Map())
      .split("\n")
      .filter((l) => /^-A EDGE-TARGET-(GROUPS|CHECKS) /.test(l));
  const from = { securityGroups: ["sg-nlb"], address: "192.0.2.200" };

  it("open a port to the NLB by naming its group or a range holding its address, on the rule's protocol and ports", () => {
    const rule = { protocol: "tcp", fromPort: 30000, toPort: 32767 };
    expect(admits([{ ...rule, group: "sg-nlb" }], "tcp", 30080, from)).toBe(true);
    expect(admits([{ ...rule, group: "sg-other" }], "tcp", 30080, from)).toBe(false);
    expect(admits([{ ...rule, cidr: "192.0.2.0/24" }], "tcp", 30080, from)).toBe(true);
    expect(admits([{ ...rule, cidr: "198.51.100.0/24" }], "tcp", 30080, from)).toBe(false);
    expect(admits([{ ...rule, group: "sg-nlb" }], "udp", 30080, from)).toBe(false);
    expect(admits([{ ...rule, group: "sg-nlb" }], "tcp", 80, from)).toBe(false);
    expect(admits([{ protocol: "-1", fromPort: 0, toPort: 0, group: "sg-nlb" }], "udp", 53, from)).toBe(true);
  });

  it("drop the NLB's flows and the health checks to ports they do not open", () => {
    expect(filter(instances([]))).toEqual([
      "-A EDGE-TARGET-GROUPS -m conntrack --ctorigdst 192.0.2.200/32 -d 192.0.2.11/32 -p tcp --dport 30080 -j DROP",
      "-A EDGE-TARGET-CHECKS -d 192.0.2.11/32 -p tcp --dport 31000 -j DROP",
    ]);
    // The traffic port open, the health-check port not: the checks fail, so the target gets nothing either.
    expect(filter(instances([{ protocol: "tcp", fromPort: 30080, toPort: 30080, group: "sg-nlb" }]))).toEqual(
      ["-A EDGE-TARGET-CHECKS -d 192.0.2.11/32 -p tcp --dport 31000 -j DROP"],
    );
    expect(filter(instances([{ protocol: "tcp", fromPort: 30000, toPort: 32767, group: "sg-nlb" }]))).toEqual(
      [],
    );
  });

  it("drop the proxy's own connections (from the NLB's address) to a port they do not open", () => {
    const proxiedGroup = { ...instances([]), attributes: { "proxy_protocol_v2.enabled": "true" } };
    expect(filter(proxiedGroup)).toEqual([
      "-A EDGE-TARGET-CHECKS -s 192.0.2.200/32 -d 192.0.2.11/32 -p tcp --dport 30080 -j DROP",
      "-A EDGE-TARGET-CHECKS -d 192.0.2.11/32 -p tcp --dport 31000 -j DROP",
    ]);
  });

  it("leave alone targets whose groups the edge does not know", () => {
    expect(filter(instances())).toEqual([]);
  });
});

describe("the listeners the edge's proxy carries", () => {
  const lb = {
    arn: "arn:lb/p",
    dnsName: "p.elb",
    addresses: ["192.0.2.201"],
    listeners: [{ port: 443, protocol: "TLS", targetGroupArn: "arn:tg/a", certificateArn: "arn:acm/c" }],
  };
  const tcp = { port: 80, protocol: "TCP", targetGroupArn: "arn:tg/a" };
  const withPp = group({ attributes: { "proxy_protocol_v2.enabled": "true" } });

  it("takes TLS listeners and TCP target groups with proxy protocol v2; leaves the rest to the kernel", () => {
    expect(proxied(lb.listeners[0]!, group())).toBe(true);
    expect(proxied(tcp, withPp)).toBe(true);
    expect(proxied(tcp, group())).toBe(false);
    expect(
      proxied({ ...tcp, protocol: "UDP" }, group({ protocol: "UDP", attributes: withPp.attributes })),
    ).toBe(false);
    // Not both: the kernel forwards nothing for a proxied listener.
    const rules = iptablesRules(
      [{ ...lb, listeners: [{ ...tcp, targetGroupArn: withPp.arn }] }],
      new Map([[withPp.arn, withPp]]),
      new Map(withPp.targets.map((t) => [stateKey(withPp.arn, t), "healthy" as const])),
    );
    expect(rules).not.toContain("--to-destination");
  });

  it("binds the NLB's address and port, ends TLS with the certificate, sends the header, connects from the NLB", () => {
    const cfg = proxyConfig(
      [
        { lb, listener: lb.listeners[0]!, group: group(), targets: group().targets, certificate: "/c.pem" },
        {
          lb: { ...lb, arn: "arn:lb/q", addresses: ["192.0.2.202"] },
          listener: tcp,
          group: group({ protocol: "TLS", attributes: withPp.attributes }),
          targets: group().targets.slice(0, 1),
        },
      ],
      { socket: "/run/p.sock" },
    );
    expect(cfg).toContain("  bind 192.0.2.201:443 ssl crt /c.pem");
    expect(cfg).toContain("  source 192.0.2.201");
    expect(cfg).toContain("  server t0 10.244.0.5:8080\n");
    expect(cfg).toContain("  server t1 10.244.1.5:8080\n");
    expect(cfg).toContain("  bind 192.0.2.202:80\n");
    expect(cfg).toContain("  server t0 10.244.0.5:8080 send-proxy-v2 ssl verify none");
    expect(cfg).not.toContain("10.244.1.5:8080 send-proxy-v2");
  });

  it("leaves out a TLS listener whose certificate the edge does not hold", () => {
    const cfg = proxyConfig([{ lb, listener: lb.listeners[0]!, group: group(), targets: group().targets }], {
      socket: "/run/p.sock",
    });
    expect(cfg).not.toContain("bind");
  });
});

describe("ELBv2's registration delay", () => {
  it("starts a new target's checks only once its registration is complete; a target registered again starts over", () => {
    const r = new Registrations(3_000);
    expect(r.complete(["a"], 1_000)).toEqual(new Set());
    expect(r.complete(["a", "b"], 3_999)).toEqual(new Set());
    expect(r.complete(["a", "b"], 4_000)).toEqual(new Set(["a"]));
    expect(r.complete(["a", "b"], 6_999)).toEqual(new Set(["a", "b"]));
    // a deregistered, then registered again.
    r.complete(["b"], 7_000);
    expect(r.complete(["a", "b"], 8_000)).toEqual(new Set(["b"]));
    expect(r.complete(["a", "b"], 11_000)).toEqual(new Set(["a", "b"]));
    // No delay: checked from the start.
    expect(new Registrations(0).complete(["a"], 0)).toEqual(new Set(["a"]));
  });
});
