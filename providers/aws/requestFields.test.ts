import { describe, expect, test } from "vitest";
import type { DesiredListener, HealthCheck } from "./model.ts";
import {
  attributes,
  batches,
  healthCheckFields,
  listenerFields,
  permissions,
  REGISTER_BATCH,
  tags,
  targets,
} from "./requestFields.ts";

describe("permissions", () => {
  test("a CIDR, an IPv6 CIDR and a prefix list each go where EC2 expects them, one port each", () => {
    expect(
      permissions([
        { protocol: "tcp", port: 80, cidr: "10.0.0.0/16" },
        { protocol: "udp", port: 53, cidr: "2001:db8::/64" },
        { protocol: "tcp", port: 443, cidr: "pl-0123" },
      ]),
    ).toEqual([
      { IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: "10.0.0.0/16" }] },
      { IpProtocol: "udp", FromPort: 53, ToPort: 53, Ipv6Ranges: [{ CidrIpv6: "2001:db8::/64" }] },
      { IpProtocol: "tcp", FromPort: 443, ToPort: 443, PrefixListIds: [{ PrefixListId: "pl-0123" }] },
    ]);
  });
});

describe("healthCheckFields", () => {
  const hc: HealthCheck = {
    protocol: "HTTP",
    port: "32000",
    intervalSeconds: 10,
    timeoutSeconds: 6,
    healthyThreshold: 2,
    unhealthyThreshold: 2,
    path: "/healthz",
    matcher: "200-399",
  };

  test("an HTTP check carries its path and matcher", () => {
    expect(healthCheckFields(hc)).toEqual({
      HealthCheckProtocol: "HTTP",
      HealthCheckPort: "32000",
      HealthCheckIntervalSeconds: 10,
      HealthCheckTimeoutSeconds: 6,
      HealthyThresholdCount: 2,
      UnhealthyThresholdCount: 2,
      HealthCheckPath: "/healthz",
      Matcher: { HttpCode: "200-399" },
    });
  });

  test("a TCP check has neither (ELBv2 refuses them on TCP)", () => {
    const fields = healthCheckFields({ ...hc, protocol: "TCP" });
    expect(fields).not.toHaveProperty("HealthCheckPath");
    expect(fields).not.toHaveProperty("Matcher");
  });
});

describe("listenerFields", () => {
  const tcp = { port: 80, protocol: "TCP", certificateArns: [] } as unknown as DesiredListener;

  test("a TCP listener forwards to its target group and names no certificate, policy or ALPN", () => {
    expect(listenerFields(tcp, "arn:tg")).toEqual({
      Protocol: "TCP",
      DefaultActions: [{ Type: "forward", TargetGroupArn: "arn:tg" }],
    });
  });

  test("a TLS listener names only its default certificate, its policy, and ALPN (None unless said)", () => {
    const tls = {
      ...tcp,
      protocol: "TLS",
      certificateArns: ["arn:cert-1", "arn:cert-2"],
      sslPolicy: "ELBSecurityPolicy-TLS13-1-2-2021-06",
    } as DesiredListener;
    expect(listenerFields(tls, "arn:tg")).toMatchObject({
      Certificates: [{ CertificateArn: "arn:cert-1" }],
      SslPolicy: "ELBSecurityPolicy-TLS13-1-2-2021-06",
      AlpnPolicy: ["None"],
    });
    expect(listenerFields({ ...tls, alpnPolicy: "HTTP2Preferred" }, "arn:tg").AlpnPolicy).toEqual([
      "HTTP2Preferred",
    ]);
  });
});

describe("the small spellings", () => {
  test("tags and attributes as Key/Value lists, targets as Id/Port", () => {
    expect(tags({ a: "1", b: "" })).toEqual([
      { Key: "a", Value: "1" },
      { Key: "b", Value: "" },
    ]);
    expect(attributes({ "deletion_protection.enabled": "false" })).toEqual([
      { Key: "deletion_protection.enabled", Value: "false" },
    ]);
    expect(targets([{ id: "i-1", port: 30080 }])).toEqual([{ Id: "i-1", Port: 30080 }]);
  });

  test("targets go in batches of at most REGISTER_BATCH, every one once, in order", () => {
    const many = Array.from({ length: 2 * REGISTER_BATCH + 1 }, (_, i) => ({ id: `i-${i}`, port: 1 }));
    const out = [...batches(many)];
    expect(out.map((b) => b.length)).toEqual([REGISTER_BATCH, REGISTER_BATCH, 1]);
    expect(out.flat()).toEqual(many);
    expect([...batches([])]).toEqual([]);
  });
});
