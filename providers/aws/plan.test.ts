import { describe, expect, test } from "vitest";
import { parseAwsSettings } from "./annotations/settings.ts";
import { desiredLoadBalancer } from "./loadBalancer/desired.ts";
import {
  SHARED_BACKEND_GROUP,
  type DesiredLoadBalancer,
  type Observed,
  type ObservedLoadBalancer,
  type ObservedTargetGroup,
} from "./model.ts";
import { describeOperation, describeOperations, plan, planDeletion, type Operation } from "./plan.ts";
import { intent, NETWORK } from "../../test/unit/support/awsIntent.ts";

const build = (annotations: Record<string, string> = {}, i = intent()) =>
  desiredLoadBalancer(i, parseAwsSettings(annotations, { scheme: "internal" }), NETWORK, "prod");

/** What the cloud holds once `d` has been applied exactly. */
function observedFrom(d: DesiredLoadBalancer, state = "active"): Observed {
  const targetGroups: ObservedTargetGroup[] = d.targetGroups.map((tg, k) => ({
    arn: `tg-arn-${k}`,
    name: tg.name,
    protocol: tg.protocol,
    port: tg.port,
    targetType: tg.targetType,
    healthCheck: { ...tg.healthCheck },
    attributes: { ...tg.attributes, "stickiness.enabled": "false" },
    targets: [...tg.targets],
    loadBalancerArns: ["lb-arn"],
  }));
  const lb: ObservedLoadBalancer = {
    arn: "lb-arn",
    name: d.name,
    dnsName: `${d.name}.elb`,
    scheme: d.scheme,
    state,
    subnets: [...d.subnets],
    securityGroups: ["sg-1"],
    ipAddressType: d.ipAddressType,
    subnetMappings: d.subnets.map((subnetId) => ({ subnetId })),
    attributes: { ...d.attributes, "deletion_protection.enabled": "false" },
    listeners: d.listeners.map((l, k) => ({
      arn: `l-${k}`,
      port: l.port,
      protocol: l.protocol,
      certificateArns: l.certificateArns,
      attributes: { ...l.attributes },
      targetGroupArn: targetGroups.find((t) => t.name === l.targetGroupName)!.arn,
    })),
  };
  return {
    loadBalancers: [lb],
    targetGroups,
    securityGroups: [{ id: "sg-1", name: d.securityGroup!.name, ingress: [...d.securityGroup!.ingress] }],
    backendRules: d.backendRules.map((r, k) => ({
      ...r,
      source: r.source === "own" ? "sg-1" : r.source,
      ruleId: `sgr-${k}`,
    })),
  };
}

const kinds = (p: ReturnType<typeof plan>) => p.operations.map((o) => o.kind);

describe("plan", () => {
  test("from nothing: security group, NLB, target group with targets, listener — in that order", () => {
    const nothing = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };
    const p = plan(build(), nothing);
    expect(kinds(p)).toEqual([
      "createSecurityGroup",
      "createLoadBalancer",
      "createTargetGroup",
      "registerTargets",
      "createListener",
    ]);
    expect(p.current).toBeUndefined();
    // A new NLB has ELBv2's defaults: only attributes that differ from them are set after creation.
    const crossZone = plan(
      build({ "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled": "true" }),
      nothing,
    );
    expect(crossZone.operations[2]).toEqual({
      kind: "modifyLoadBalancerAttributes",
      attributes: { "load_balancing.cross_zone.enabled": "true" },
    });
  });

  test("when the cloud already matches, the plan is empty (unmanaged attributes are ignored)", () => {
    const d = build({}, intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 }));
    expect(plan(d, observedFrom(d)).operations).toEqual([]);
    const ip = build({ "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" });
    expect(plan(ip, observedFrom(ip)).operations).toEqual([]);
  });

  test("targets: only the difference is registered and deregistered", () => {
    const d = build();
    const obs = observedFrom(d);
    obs.targetGroups[0]!.targets = [
      { id: "i-0000000000000000a", port: 30080 },
      { id: "i-gone", port: 30080 },
    ];
    const p = plan(d, obs);
    expect(p.operations).toEqual([
      {
        kind: "registerTargets",
        targetGroupName: d.targetGroups[0]!.name,
        targets: [{ id: "i-0000000000000000b", port: 30080 }],
      },
      {
        kind: "deregisterTargets",
        targetGroupArn: "tg-arn-0",
        name: d.targetGroups[0]!.name,
        targets: [{ id: "i-gone", port: 30080 }],
      },
    ]);
  });

  test("Local to Cluster changes the health check in place, without a new target group", () => {
    const local = build({}, intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 }));
    const cluster = build();
    expect(cluster.targetGroups[0]!.name).toBe(local.targetGroups[0]!.name);
    const p = plan(cluster, observedFrom(local));
    expect(kinds(p)).toEqual(["modifyHealthCheck"]);
    expect(describeOperation(p.operations[0]!)).toContain("TCP:traffic-port");
  });

  test("instance to ip: new target group, listener moved to it, then the old group deleted", () => {
    const before = build();
    const after = build({ "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" });
    expect(kinds(plan(after, observedFrom(before)))).toEqual([
      "createTargetGroup",
      "registerTargets",
      "modifyListener",
      "deleteTargetGroup",
    ]);
  });

  test("a port added and a port removed", () => {
    const before = build();
    const after = build(
      {},
      intent({ ports: [{ name: "https", protocol: "TCP", port: 443, nodePort: 30443 }] }),
    );
    expect(kinds(plan(after, observedFrom(before)))).toEqual([
      "authorizeIngress",
      "revokeIngress",
      "createTargetGroup",
      "registerTargets",
      "createListener",
      "deleteListener",
      "deleteTargetGroup",
    ]);
  });

  test("the cluster's shared backend group rides on the NLB beside its own group, or beside the user's", () => {
    const d = { ...build(), sharedBackendGroup: "sg-shared" };
    const created = plan(d, { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] });
    expect(created.operations.find((o) => o.kind === "createLoadBalancer")).toMatchObject({
      loadBalancer: { sharedBackendGroup: "sg-shared" },
    });
    // An NLB from before the shared group (its own group alone) gets it added in place.
    const older = observedFrom(build());
    expect(plan(d, older).operations).toEqual([
      { kind: "setSecurityGroups", groupIds: ["sg-1", "sg-shared"] },
    ]);
    const both = observedFrom(build());
    both.loadBalancers[0]!.securityGroups = ["sg-shared", "sg-1"];
    expect(plan(d, both).operations).toEqual([]);
    const user = {
      ...build({ "service.beta.kubernetes.io/aws-load-balancer-security-groups": "sg-user" }),
      sharedBackendGroup: "sg-shared",
    };
    const userObserved = observedFrom(build());
    userObserved.securityGroups = [];
    expect(plan(user, userObserved).operations).toEqual([
      { kind: "setSecurityGroups", groupIds: ["sg-user", "sg-shared"] },
    ]);
  });

  test("changed attributes, subnets and a lost security group are put right in place", () => {
    const d = build({
      "service.beta.kubernetes.io/aws-load-balancer-proxy-protocol": "*",
      "service.beta.kubernetes.io/aws-load-balancer-cross-zone-load-balancing-enabled": "true",
    });
    const obs = observedFrom(build());
    obs.loadBalancers[0]!.subnets = ["subnet-a"];
    obs.loadBalancers[0]!.securityGroups = [];
    const p = plan(d, obs);
    expect(p.operations).toEqual([
      { kind: "setSubnets", subnets: ["subnet-a", "subnet-b"] },
      { kind: "setSecurityGroups", groupIds: ["sg-1"] },
      { kind: "modifyLoadBalancerAttributes", attributes: { "load_balancing.cross_zone.enabled": "true" } },
      {
        kind: "modifyTargetGroupAttributes",
        targetGroupArn: "tg-arn-0",
        name: d.targetGroups[0]!.name,
        attributes: { "proxy_protocol_v2.enabled": "true" },
      },
    ]);
  });

  test("a new scheme: a new NLB and target groups first; the old NLB, its groups and nothing else deleted after", () => {
    const before = build();
    const after = build({ "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" });
    const p = plan(after, observedFrom(before));
    expect(kinds(p)).toEqual([
      "createLoadBalancer",

      "createTargetGroup",
      "registerTargets",
      "createListener",
      "deleteLoadBalancer",
      "deleteTargetGroup",
    ]);
    expect(p.replaced.map((lb) => lb.name)).toEqual([before.name]);
  });

  test("a listener pointing at the wrong group or with the wrong certificate is modified", () => {
    const d = build({
      "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": "arn:aws:acm:x:1:certificate/new",
    });
    const obs = observedFrom(
      build({ "service.beta.kubernetes.io/aws-load-balancer-ssl-cert": "arn:aws:acm:x:1:certificate/old" }),
    );
    expect(kinds(plan(d, obs))).toEqual(["modifyListener"]);
  });

  test("planning is deterministic", () => {
    const d = build();
    const obs = observedFrom(build({ "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" }));
    expect(plan(d, obs)).toEqual(plan(d, obs));
  });
});

describe("planDeletion", () => {
  test("load balancers first, then target groups, then security groups; nothing when nothing is left", () => {
    const obs = observedFrom(build());
    expect(planDeletion(obs).map((o) => o.kind)).toEqual([
      "deleteLoadBalancer",
      "deleteTargetGroup",
      "deleteSecurityGroup",
    ]);
    expect(
      planDeletion({ loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] }),
    ).toEqual([]);
  });
});

describe("what a pass plans before the Service's own resources", () => {
  test("the shared backend part comes first, said line by line, and a new shared group stands in until made", () => {
    const d = { ...build(), sharedBackendGroup: SHARED_BACKEND_GROUP };
    const shared: Operation = {
      kind: "useSharedBackend",
      vpcIds: ["vpc-1"],
      vpcId: "vpc-1",
      changes: [
        "create the cluster's shared backend security group",
        "admit the shared group: sg-n tcp/30080",
      ],
    };
    const nothing = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };
    const p = plan(d, nothing, [shared]);
    expect(kinds(p)[0]).toBe("useSharedBackend");
    expect(describeOperations(p.operations).slice(0, 3)).toEqual([
      ...shared.changes,
      expect.stringMatching(/^create security group /),
    ]);
    // An NLB that exists joins it by SetSecurityGroups, naming the stand-in until apply knows its ID.
    const observed = observedFrom(build());
    const joining = plan(d, observed, [shared]);
    expect(joining.operations).toContainEqual({
      kind: "setSecurityGroups",
      groupIds: ["sg-1", SHARED_BACKEND_GROUP],
    });
    expect(describeOperation(joining.operations.find((o) => o.kind === "setSecurityGroups")!)).toBe(
      "set the load balancer's security groups to sg-1, (the shared backend group)",
    );
  });
});
