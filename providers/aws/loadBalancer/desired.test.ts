// The behaviour table of the design notes, for the AWS provider.
import { describe, expect, test } from "vitest";
import { ConfigurationError } from "../../errors.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { desiredLoadBalancer } from "./desired.ts";
import { targetIds } from "../targetGroups/desired.ts";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";

const settings = (annotations: Record<string, string> = {}) =>
  parseAwsSettings(annotations, { scheme: "internal" });
const IP = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };
const desired = (i = intent(), annotations: Record<string, string> = {}) =>
  desiredLoadBalancer(i, settings(annotations), NETWORK, "prod");

describe("targets and health checks, per the behaviour table", () => {
  test("instance + Local: node targets on the nodePort, HTTP check on healthCheckNodePort /healthz", () => {
    const tg = desired(intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32100 }))
      .targetGroups[0]!;
    expect(tg).toMatchObject({ targetType: "instance", port: 30080, protocol: "TCP" });
    expect(tg.targets).toEqual([
      { id: "i-0000000000000000a", port: 30080 },
      { id: "i-0000000000000000b", port: 30080 },
    ]);
    expect(tg.healthCheck).toMatchObject({ protocol: "HTTP", port: "32100", path: "/healthz" });
  });

  test("instance + Local: a node whose every endpoint is terminating leaves the target group to drain", () => {
    const ep = (ip: string, nodeName: string) => ({ ip, nodeName, ports: { http: 8080 } });
    const draining = intent({
      externalTrafficPolicy: "Local",
      healthCheckNodePort: 32100,
      endpoints: [ep("10.0.1.1", "n1")],
      drainingEndpoints: [ep("10.0.1.2", "n2")],
    });
    expect(desired(draining).targetGroups[0]!.targets).toEqual([{ id: "i-0000000000000000a", port: 30080 }]);
    // Its security groups still admit the connections it drains.
    expect(targetIds(draining, settings())).toEqual(["i-0000000000000000a", "i-0000000000000000b"]);
    // Under Cluster, kube-proxy on it forwards to the ready endpoints elsewhere: it stays.
    const cluster = intent({ ...draining, externalTrafficPolicy: "Cluster" });
    expect(desired(cluster).targetGroups[0]!.targets).toHaveLength(2);
  });

  test("instance + Cluster: TCP check on the traffic port, or kube-proxy's :10256/healthz when asked", () => {
    expect(desired().targetGroups[0]!.healthCheck).toEqual({
      protocol: "TCP",
      port: "traffic-port",
      intervalSeconds: 10,
      timeoutSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    });
    const kubeProxy = desired(intent(), { "portico.io/health-check-kube-proxy": "true" }).targetGroups[0]!
      .healthCheck;
    expect(kubeProxy).toMatchObject({ protocol: "HTTP", port: "10256", path: "/healthz" });
  });

  test("ip targets: pod IPs on their target port, TCP check on the traffic port, whatever the policy", () => {
    for (const policy of ["Cluster", "Local"] as const) {
      const tg = desired(intent({ externalTrafficPolicy: policy, healthCheckNodePort: 32100 }), IP)
        .targetGroups[0]!;
      expect(tg).toMatchObject({ targetType: "ip", port: 80, targets: [{ id: "10.0.1.5", port: 8080 }] });
      expect(tg.healthCheck).toMatchObject({ protocol: "TCP", port: "traffic-port" });
    }
  });

  test("allocateLoadBalancerNodePorts: false refuses instance targets with the field and the fix; ip targets work", () => {
    const i = intent({ allocateNodePorts: false, ports: [{ name: "http", protocol: "TCP", port: 80 }] });
    const err = (() => {
      try {
        desired(i);
      } catch (e) {
        return e as ConfigurationError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err!.reason).toBe("NodePortsDisabled");
    expect(err!.field).toBe("spec.allocateLoadBalancerNodePorts");
    expect(err!.message).toContain("nlb-target-type: ip");
    expect(desired(i, IP).targetGroups[0]!.targets).toEqual([{ id: "10.0.1.5", port: 8080 }]);
  });

  test("every health-check field can be overridden by annotation", () => {
    const hc = desired(intent(), {
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol": "http",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-port": "8081",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-path": "/ready",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "15",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-timeout": "5",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-healthy-threshold": "4",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-unhealthy-threshold": "5",
      "service.beta.kubernetes.io/aws-load-balancer-healthcheck-success-codes": "200-299",
    }).targetGroups[0]!.healthCheck;
    expect(hc).toEqual({
      protocol: "HTTP",
      port: "8081",
      path: "/ready",
      intervalSeconds: 15,
      timeoutSeconds: 5,
      healthyThreshold: 4,
      unhealthyThreshold: 5,
      matcher: "200-299",
    });
  });

  test("a shorter interval alone brings the default timeout down with it", () => {
    expect(
      desired(intent(), { "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "5" })
        .targetGroups[0]!.healthCheck,
    ).toMatchObject({ intervalSeconds: 5, timeoutSeconds: 5 });
  });

  test("nodes without an AWS providerID and endpoints without the port are skipped", () => {
    const i = intent({
      nodes: [
        { name: "bare", providerID: "kind://docker/x" },
        { name: "n1", providerID: "aws:///z/i-0000000000000000a" },
      ],
      endpoints: [
        { ip: "10.0.0.1", ports: {} },
        { ip: "10.0.0.2", ports: { http: 1 } },
      ],
    });
    expect(desired(i).targetGroups[0]!.targets.map((t) => t.id)).toEqual(["i-0000000000000000a"]);
    expect(desired(i, IP).targetGroups[0]!.targets.map((t) => t.id)).toEqual(["10.0.0.2"]);
  });
});

describe("listeners", () => {
  test("TCP and UDP with one number share a TCP_UDP listener; UDP alone checks through kube-proxy", () => {
    const lb = desired(
      intent({
        ports: [
          { name: "t", protocol: "TCP", port: 53, nodePort: 30053 },
          { name: "u", protocol: "UDP", port: 53, nodePort: 30053 },
          { name: "s", protocol: "UDP", port: 514, nodePort: 30514 },
        ],
      }),
    );
    expect(lb.listeners.map((l) => [l.port, l.protocol])).toEqual([
      [53, "TCP_UDP"],
      [514, "UDP"],
    ]);
    expect(lb.targetGroups.map((tg) => tg.healthCheck.port)).toEqual(["traffic-port", "10256"]);
    expect(lb.securityGroup!.ingress.map((r) => `${r.protocol}/${r.port}`)).toEqual([
      "tcp/53",
      "udp/53",
      "udp/514",
    ]);
  });

  test("TCP_UDP with different nodePorts cannot share one target group", () => {
    expect(() =>
      desired(
        intent({
          ports: [
            { name: "t", protocol: "TCP", port: 53, nodePort: 30053 },
            { name: "u", protocol: "UDP", port: 53, nodePort: 30054 },
          ],
        }),
      ),
    ).toThrow(/NodePortMismatch|different nodePorts/);
  });

  test("TLS on the chosen ports (by number or name), TCP elsewhere; TLS to the backend when asked", () => {
    const i = intent({
      ports: [
        { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
        { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
      ],
    });
    const cert = "arn:aws:acm:us-east-1:1:certificate/x";
    const lb = desired(i, {
      "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": cert,
      "service.beta.kubernetes.io/aws-load-balancer-ssl-ports": "https",
      "service.beta.kubernetes.io/aws-load-balancer-ssl-negotiation-policy":
        "ELBSecurityPolicy-TLS13-1-2-2021-06",
    });
    expect(lb.listeners).toEqual([
      {
        port: 80,
        protocol: "TCP",
        certificateArns: [],
        attributes: {},
        targetGroupName: lb.targetGroups[0]!.name,
      },
      {
        port: 443,
        protocol: "TLS",
        certificateArns: [cert],
        sslPolicy: "ELBSecurityPolicy-TLS13-1-2-2021-06",
        attributes: {},
        targetGroupName: lb.targetGroups[1]!.name,
      },
    ]);
    expect(lb.targetGroups.map((tg) => tg.protocol)).toEqual(["TCP", "TCP"]);
    const all = desired(i, {
      "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": cert,
      "service.beta.kubernetes.io/aws-load-balancer-backend-protocol": "ssl",
    });
    expect(all.listeners.map((l) => l.protocol)).toEqual(["TLS", "TLS"]);
    expect(all.targetGroups.map((tg) => tg.protocol)).toEqual(["TLS", "TLS"]);
  });

  test("SCTP and more than 50 listeners are refused before any cloud call", () => {
    expect(() =>
      desired(intent({ ports: [{ name: "s", protocol: "SCTP", port: 1, nodePort: 30001 }] })),
    ).toThrow("an NLB cannot serve SCTP");
    const many = Array.from({ length: 51 }, (_, k) => ({
      name: `p${k}`,
      protocol: "TCP" as const,
      port: 1000 + k,
      nodePort: 30000 + k,
    }));
    expect(() => desired(intent({ ports: many }))).toThrow("51 listeners are needed and an NLB allows 50");
    expect(desired(intent({ ports: many.slice(0, 50) })).listeners).toHaveLength(50);
  });

  test("more than 1000 targets in one target group are refused, naming how to narrow them", () => {
    const nodes = Array.from({ length: 1001 }, (_, k) => ({
      name: `n${k}`,
      providerID: `aws:///z/i-${k.toString(16).padStart(17, "0")}`,
    }));
    expect(() => desired(intent({ nodes }))).toThrow(/1001 targets exceed the 1000.*target-node-labels/);
  });
});

describe("names, tags, scheme, security group", () => {
  test("names fit ELBv2's 32 characters and change with what cannot change in place", () => {
    const a = desired();
    expect(a.name.length).toBeLessThanOrEqual(32);
    expect(a.targetGroups[0]!.name.length).toBeLessThanOrEqual(32);
    expect(desired().name).toBe(a.name);
    expect(
      desired(intent(), { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" }).name,
    ).not.toBe(a.name);
    expect(desired(intent(), IP).targetGroups[0]!.name).not.toBe(a.targetGroups[0]!.name);
    expect(desired(intent({ service: { namespace: "shop", name: "web", uid: "uid-2" } })).name).not.toBe(
      a.name,
    );
    expect(desired(intent(), { "service.beta.kubernetes.io/aws-load-balancer-name": "my-nlb" }).name).toBe(
      "my-nlb",
    );
  });

  test("truncated namespace and name parts never leave a double hyphen", () => {
    const lb = desired(intent({ service: { namespace: "restart-abc", name: "-web", uid: "u" } }));
    expect(desired(intent({ service: { namespace: "---", name: "a", uid: "u" } })).name).toMatch(/^k8s-x-a-/);
    for (const name of [lb.name, lb.targetGroups[0]!.name, lb.securityGroup!.name]) {
      expect(name).not.toContain("--");
      expect(name).toMatch(/^k8s-restart-web-[0-9a-f]{10}$/);
    }
  });

  test("every resource carries the ownership tags and the user's additional tags", () => {
    const lb = desired(intent(), {
      "service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags": "team=web,cost=42",
    });
    const owned = {
      "portico.io/cluster": "prod",
      "portico.io/service": "shop/web",
      "portico.io/service-uid": "uid-1",
      team: "web",
      cost: "42",
    };
    expect(lb.tags).toMatchObject({ ...owned, "portico.io/resource": "loadbalancer" });
    expect(lb.targetGroups[0]!.tags).toMatchObject({ ...owned, "portico.io/resource": "targetgroup" });
    expect(lb.securityGroup!.tags).toMatchObject({ ...owned, "portico.io/resource": "securitygroup" });
  });

  test("scheme defaults to internal; the legacy internal annotation and the scheme annotation are honoured", () => {
    expect(desired().scheme).toBe("internal");
    expect(
      desired(intent(), { "service.beta.kubernetes.io/aws-load-balancer-internal": "false" }).scheme,
    ).toBe("internet-facing");
    expect(
      desired(intent(), { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" }).scheme,
    ).toBe("internet-facing");
  });

  test("source ranges become the security group's only ingress; dualstack opens ::/0 too", () => {
    expect(desired(intent({ sourceRanges: ["203.0.113.0/24"] })).securityGroup!.ingress).toEqual([
      { protocol: "tcp", port: 80, cidr: "203.0.113.0/24" },
    ]);
    expect(
      desired(intent(), {
        "service.beta.kubernetes.io/aws-load-balancer-ip-address-type": "dualstack",
      }).securityGroup!.ingress.map((r) => r.cidr),
    ).toEqual(["0.0.0.0/0", "::/0"]);
  });

  test("attributes: managed defaults, annotations on top", () => {
    const lb = desired(intent(), {
      "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled": "true",
      "service.beta.kubernetes.io/aws-load-balancer-proxy-protocol": "*",
      "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes":
        "deregistration_delay.timeout_seconds=15,preserve_client_ip.enabled=true",
    });
    expect(lb.attributes).toEqual({ "load_balancing.cross_zone.enabled": "true" });
    expect(lb.targetGroups[0]!.attributes).toEqual({
      "deregistration_delay.timeout_seconds": "15",
      "proxy_protocol_v2.enabled": "true",
      "preserve_client_ip.enabled": "true",
      "stickiness.enabled": "false",
    });
    expect(desired().targetGroups[0]!.attributes).toEqual({
      "deregistration_delay.timeout_seconds": "300",
      "proxy_protocol_v2.enabled": "false",
      "stickiness.enabled": "false",
    });
  });

  test("sessionAffinity ClientIP sticks by source IP, except on TLS target groups; the user's attributes win", () => {
    const sticky = { ...intent(), clientIPAffinity: true };
    expect(desired(sticky).targetGroups[0]!.attributes).toMatchObject({
      "stickiness.enabled": "true",
      "stickiness.type": "source_ip",
    });
    // ELBv2 has no source-IP stickiness on TLS target groups: the pair is refused rather than dropped.
    expect(() =>
      desired(sticky, {
        "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": "arn:aws:acm:us-east-1:1:certificate/x",
        "service.beta.kubernetes.io/aws-load-balancer-backend-protocol": "ssl",
      }),
    ).toThrow(
      /spec\.sessionAffinity: ClientIP affinity .* \(together with metadata\.annotations\[service\.beta\.kubernetes\.io\/aws-load-balancer-backend-protocol\]\)/,
    );
    const tls = desired(intent(), {
      "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": "arn:aws:acm:us-east-1:1:certificate/x",
      "service.beta.kubernetes.io/aws-load-balancer-backend-protocol": "ssl",
    });
    expect(tls.targetGroups[0]!.protocol).toBe("TLS");
    expect(tls.targetGroups[0]!.attributes["stickiness.enabled"]).toBe("false");
    const mine = desired(sticky, {
      "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes": "stickiness.enabled=false",
    });
    expect(mine.targetGroups[0]!.attributes["stickiness.enabled"]).toBe("false");
  });
});
