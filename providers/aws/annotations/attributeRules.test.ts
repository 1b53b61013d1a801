import { describe, expect, test } from "vitest";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";
import { parseAwsSettings } from "./settings.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const parse = (annotations: Record<string, string>) => parseAwsSettings(annotations, { scheme: "internal" });

describe("attributes ELBv2 would refuse are refused first", () => {
  test.each([
    [`${P}attributes`, "deletion_protection.enabled=yes", /would be refused by ELBv2; use "true" or "false"/],
    [
      `${P}attributes`,
      "idle_timeout.timeout_seconds=60",
      /"idle_timeout.timeout_seconds" is not an attribute ELBv2 has here/,
    ],
    [`${P}attributes`, "dns_record.client_routing_policy=nearest", /use one of any_availability_zone/],
    [`${P}target-group-attributes`, "deregistration_delay.timeout_seconds=5000", /from 0 to 3600/],
    [`${P}target-group-attributes`, "stickiness.type=lb_cookie", /use one of source_ip/],
    [`${P}target-group-attributes.443`, "preserve_client_ip.enabled=maybe", /use "true" or "false"/],
    [
      `${P}target-group-attributes`,
      "target_group_health.dns_failover.minimum_healthy_targets.percentage=150",
      /from 1 to 100 or "off"/,
    ],
  ])("%s: %s", (annotation, value, message) => {
    expect(() => parse({ [annotation]: value })).toThrow(message);
    expect(() => parse({ [annotation]: value })).toThrow(annotation);
  });

  test("values ELBv2 takes pass, the per-port empty value included", () => {
    const s = parse({
      [`${P}attributes`]: "deletion_protection.enabled=true,access_logs.s3.bucket=logs",
      [`${P}target-group-attributes`]:
        "deregistration_delay.timeout_seconds=0,load_balancing.cross_zone.enabled=use_load_balancer_configuration,target_group_health.dns_failover.minimum_healthy_targets.count=off",
      [`${P}target-group-attributes.443`]: "deregistration_delay.timeout_seconds=",
    });
    expect(s.loadBalancerAttributes["deletion_protection.enabled"]).toBe("true");
    expect(s.targetGroupAttributes["deregistration_delay.timeout_seconds"]).toBe("0");
  });
});

describe("additional tags", () => {
  test("Portico's own tag keys and AWS's aws: prefix are refused, not dropped", () => {
    expect(() => parse({ [`${P}additional-resource-tags`]: "portico.io/cluster=x" })).toThrow(
      /reserved prefix portico.io\/; Portico writes these tags itself/,
    );
    expect(() => parse({ [`${P}additional-resource-tags`]: "aws:createdBy=me" })).toThrow(
      /AWS keeps aws: tags/,
    );
  });

  test("more tags than a resource takes beside Portico's, or too long, are refused", () => {
    const many = Array.from({ length: 46 }, (_, i) => `k${i}=v`).join(",");
    expect(() => parse({ [`${P}additional-resource-tags`]: many })).toThrow(
      /46 tags, but a resource takes 50 and Portico writes 5; give at most 45/,
    );
    expect(() => parse({ [`${P}additional-resource-tags`]: `${"k".repeat(129)}=v` })).toThrow(
      /longer than 128/,
    );
    expect(parse({ [`${P}additional-resource-tags`]: "team=shop,cost-centre=42" }).additionalTags).toEqual({
      team: "shop",
      "cost-centre": "42",
    });
  });
});

describe("TLS ports", () => {
  const build = (annotations: Record<string, string>) =>
    desiredLoadBalancer(
      intent({
        ports: [
          { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
          { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
        ],
      }),
      parse(annotations),
      NETWORK,
      "prod",
    );
  const CERT = { [`${P}ssl-cert`]: "arn:aws:acm:us-east-1:111122223333:certificate/abc" };

  test("a TLS port the Service lacks is refused, naming its ports", () => {
    expect(() => build({ ...CERT, [`${P}ssl-ports`]: "8443" })).toThrow(
      /ssl-ports\]: the Service has no port "8443"; name its ports by number or name \(80\/http, 443\/https\)/,
    );
  });

  test("TLS ports without a certificate are refused", () => {
    expect(() => build({ [`${P}ssl-ports`]: "443" })).toThrow(
      /TLS ports are named but no certificate is given/,
    );
  });

  test("ports named by number or by name get TLS listeners", () => {
    const byName = build({ ...CERT, [`${P}ssl-ports`]: "https" });
    expect(byName.listeners.map((l) => `${l.protocol}:${l.port}`)).toEqual(["TCP:80", "TLS:443"]);
  });
});
