import { describe, expect, test } from "vitest";
import type { LoadBalancer, TargetGroup } from "@aws-sdk/client-elastic-load-balancing-v2";
import { parseAwsSettings } from "./annotations/settings.ts";
import { desiredLoadBalancer } from "./loadBalancer/desired.ts";
import type { DesiredLoadBalancer, Observed } from "./model.ts";
import { plan } from "./plan.ts";
import { nothingWritten, observedAfter, type Written } from "./written.ts";
import { intent, NETWORK } from "../../test/unit/support/awsIntent.ts";

const build = (annotations: Record<string, string> = {}, i = intent()) =>
  desiredLoadBalancer(i, parseAwsSettings(annotations, { scheme: "internal" }), NETWORK, "prod");
const nothing: Observed = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };

/** What ELBv2 and EC2 answer to the writes that make `d` (as the SDK returns them). */
function answers(d: DesiredLoadBalancer, groupId = "sg-new"): Written {
  const written = nothingWritten();
  written.securityGroupId = groupId;
  written.loadBalancer = {
    LoadBalancerArn: "arn:lb/new",
    LoadBalancerName: d.name,
    DNSName: `${d.name}.elb`,
    Scheme: d.scheme,
    State: { Code: "provisioning" },
    IpAddressType: d.ipAddressType,
    SecurityGroups: [groupId],
    AvailabilityZones: d.subnets.map((SubnetId) => ({ SubnetId, ZoneName: "z" })),
  } satisfies LoadBalancer;
  d.targetGroups.forEach((tg, k) =>
    written.targetGroups.set(tg.name, {
      TargetGroupArn: `arn:tg/${k}`,
      TargetGroupName: tg.name,
      Protocol: tg.protocol,
      Port: tg.port,
      TargetType: tg.targetType,
      HealthCheckProtocol: tg.healthCheck.protocol,
      HealthCheckPort: tg.healthCheck.port,
      HealthCheckIntervalSeconds: tg.healthCheck.intervalSeconds,
      HealthCheckTimeoutSeconds: tg.healthCheck.timeoutSeconds,
      HealthyThresholdCount: tg.healthCheck.healthyThreshold,
      UnhealthyThresholdCount: tg.healthCheck.unhealthyThreshold,
      ...(tg.healthCheck.path ? { HealthCheckPath: tg.healthCheck.path } : {}),
      ...(tg.healthCheck.matcher ? { Matcher: { HttpCode: tg.healthCheck.matcher } } : {}),
      LoadBalancerArns: [],
    } satisfies TargetGroup),
  );
  d.listeners.forEach((l, k) => written.listeners.set(l.port, `arn:listener/${k}`));
  return written;
}

describe("observedAfter", () => {
  test("a new Service: what was made, as answered, with the targets registered and nothing left to plan", () => {
    const d = build();
    const p = plan(d, nothing);
    const after = observedAfter(d, nothing, p, p.operations, answers(d))!;
    expect(after).toBeDefined();
    expect(plan(d, after).operations).toEqual([]);
    expect(after.loadBalancers).toHaveLength(1);
    expect(after.loadBalancers[0]).toMatchObject({ arn: "arn:lb/new", securityGroups: ["sg-new"] });
    expect(after.loadBalancers[0]!.listeners[0]).toMatchObject({
      arn: "arn:listener/0",
      targetGroupArn: "arn:tg/0",
    });
    expect(after.targetGroups[0]!.targets).toEqual(d.targetGroups[0]!.targets);
    // The listener attaches the group to the load balancer, as the listings will show it.
    expect(after.targetGroups[0]!.loadBalancerArns).toEqual(["arn:lb/new"]);
    expect(after.securityGroups).toEqual([
      { id: "sg-new", name: d.securityGroup!.name, ingress: d.securityGroup!.ingress },
    ]);
  });

  test("a change on an existing load balancer: targets, health check and attributes as written, ARNs kept", () => {
    const before = build();
    const p0 = plan(before, nothing);
    const existing = observedAfter(before, nothing, p0, p0.operations, answers(before))!;
    const d = build(
      {
        "service.beta.kubernetes.io/aws-load-balancer-healthcheck-interval": "20",
        "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes":
          "deregistration_delay.timeout_seconds=30",
      },
      intent({
        nodes: [
          { name: "n1", providerID: "aws:///us-east-1a/i-0000000000000000a" },
          { name: "n3", providerID: "aws:///us-east-1c/i-0000000000000000c" },
        ],
      }),
    );
    const p = plan(d, existing);
    expect(p.operations.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        "modifyHealthCheck",
        "modifyTargetGroupAttributes",
        "registerTargets",
        "deregisterTargets",
      ]),
    );
    const after = observedAfter(d, existing, p, p.operations, nothingWritten())!;
    expect(after).toBeDefined();
    expect(plan(d, after).operations).toEqual([]);
    expect(after.targetGroups[0]!.arn).toBe("arn:tg/0");
    expect(after.loadBalancers[0]!.listeners[0]!.arn).toBe("arn:listener/0");
  });

  test("writes it cannot follow, or answers it lacks, leave the next pass to observe", () => {
    const d = build();
    const p = plan(d, nothing);
    // A target group found by name after a refused creation is not described by the answer.
    const partial = answers(d);
    partial.targetGroups.set(d.targetGroups[0]!.name, { TargetGroupArn: "arn:tg/found" });
    expect(observedAfter(d, nothing, p, p.operations, partial)).toBeUndefined();
    // The load balancer's own group was not made (no ID to name).
    const noGroup = answers(d);
    delete noGroup.securityGroupId;
    expect(observedAfter(d, nothing, p, p.operations, noGroup)).toBeUndefined();
    // Subnets set on an NLB: where its addresses are now is for a read to say.
    expect(
      observedAfter(d, nothing, p, [...p.operations, { kind: "setSubnets", subnets: ["s"] }], answers(d)),
    ).toBeUndefined();
  });

  test("an answer that differs from what was asked (a plan against it would still change something): none", () => {
    const d = build();
    const p = plan(d, nothing);
    const odd = answers(d);
    // ELBv2 answered with a group that is not the one asked for.
    odd.loadBalancer!.SecurityGroups = ["sg-other"];
    expect(observedAfter(d, nothing, p, p.operations, odd)).toBeUndefined();
  });
});
