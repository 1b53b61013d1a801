import { describe, expect, test } from "vitest";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";
import { parseAwsSettings } from "../annotations/settings.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import {
  adoptedNames,
  adoptionBlockers,
  asTaken,
  decideAdoption,
  describeAdoption,
  lbcLoadBalancerName,
  recogniseLbc,
  renamed,
  renamesOf,
  type LbcObserved,
} from "./adoption.ts";
import type { DesiredLoadBalancer, ObservedLoadBalancer, ObservedTargetGroup } from "../model.ts";
import { describeOperations, plan } from "../plan.ts";
import { takeOverOperation } from "./operations.ts";

const SERVICE = { namespace: "shop", name: "web", uid: "uid-1" };
const NLB_ARN = "arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/net/k8s-shop-web-0123456789/abc";
const TG_ARN = "arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/k8s-shop-web-9876543210/def";
const lbcTags = (over: Record<string, string | undefined> = {}) => ({
  "elbv2.k8s.aws/cluster": "prod",
  "service.k8s.aws/stack": "shop/web",
  "service.k8s.aws/resource": "LoadBalancer",
  ...over,
});

const build = (annotations: Record<string, string> = {}) =>
  desiredLoadBalancer(intent(), parseAwsSettings(annotations, { scheme: "internal" }), NETWORK, "prod");

function lbcNlb(over: Partial<ObservedLoadBalancer> = {}): ObservedLoadBalancer {
  return {
    arn: NLB_ARN,
    name: lbcLoadBalancerName("prod", SERVICE, "internal"),
    dnsName: "k8s-shop-web-0123456789.elb.amazonaws.com",
    scheme: "internal",
    state: "active",
    subnets: ["subnet-a", "subnet-b"],
    securityGroups: ["sg-lbc-frontend"],
    ipAddressType: "ipv4",
    subnetMappings: [{ subnetId: "subnet-a" }, { subnetId: "subnet-b" }],
    attributes: {},
    listeners: [
      { arn: "l-80", port: 80, protocol: "TCP", certificateArns: [], attributes: {}, targetGroupArn: TG_ARN },
    ],
    ...over,
  };
}

function lbcGroup(over: Partial<ObservedTargetGroup> = {}): ObservedTargetGroup {
  return {
    arn: TG_ARN,
    name: "k8s-shop-web-9876543210",
    protocol: "TCP",
    port: 30080,
    targetType: "instance",
    healthCheck: {
      protocol: "TCP",
      port: "traffic-port",
      intervalSeconds: 10,
      timeoutSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    },
    attributes: {},
    targets: [{ id: "i-old", port: 30080 }],
    loadBalancerArns: [NLB_ARN],
    ...over,
  };
}

const lbc = (over: Partial<LbcObserved> = {}): LbcObserved => ({
  loadBalancer: lbcNlb(),
  targetGroups: [{ observed: lbcGroup(), port: 80, ipAddressType: "ipv4" }],
  ...over,
});

describe("recognising LBC's resources by its tags", () => {
  test("its NLB and a target group per Service port, for its cluster and the Service's stack", () => {
    const found = recogniseLbc(
      [
        { arn: NLB_ARN, tags: lbcTags() },
        { arn: TG_ARN, tags: lbcTags({ "service.k8s.aws/resource": "shop/web:80" }) },
        { arn: `${TG_ARN}-443`, tags: lbcTags({ "service.k8s.aws/resource": "shop/web:443" }) },
      ],
      "prod",
      SERVICE,
    );
    expect(found).toEqual({
      loadBalancerArn: NLB_ARN,
      targetGroups: [
        { arn: TG_ARN, port: 80 },
        { arn: `${TG_ARN}-443`, port: 443 },
      ],
    });
  });

  test("another cluster's, another Service's, an Ingress's and what Portico already owns are left out", () => {
    const found = recogniseLbc(
      [
        { arn: NLB_ARN, tags: lbcTags({ "elbv2.k8s.aws/cluster": "staging" }) },
        { arn: NLB_ARN, tags: lbcTags({ "service.k8s.aws/stack": "shop/webs" }) },
        { arn: NLB_ARN, tags: lbcTags({ "ingress.k8s.aws/stack": "shop/web" }) },
        { arn: NLB_ARN, tags: lbcTags({ "portico.io/cluster": "prod", "portico.io/service-uid": "uid-2" }) },
        // A target group whose resource ID names another Service, or no port.
        { arn: TG_ARN, tags: lbcTags({ "service.k8s.aws/resource": "shop/webs:80" }) },
        { arn: TG_ARN, tags: lbcTags({ "service.k8s.aws/resource": "shop/web:http" }) },
        // A target group's ARN with the load balancer's resource ID is not an NLB.
        { arn: TG_ARN, tags: lbcTags() },
      ],
      "prod",
      SERVICE,
    );
    expect(found).toEqual({ targetGroups: [] });
  });

  test("one already tagged as this Service's but still carrying LBC's tags (a take-over cut short) is taken, to finish it", () => {
    const halfway = lbcTags({ "portico.io/cluster": "prod", "portico.io/service-uid": "uid-1" });
    expect(recogniseLbc([{ arn: NLB_ARN, tags: halfway }], "prod", SERVICE).loadBalancerArn).toBe(NLB_ARN);
  });

  test("LBC's NLB name is found again from its cluster name, the Service's UID and the scheme (LBC's own test vector)", () => {
    expect(lbcLoadBalancerName("", { namespace: "foo", name: "bar", uid: "" }, "internet-facing")).toBe(
      "k8s-foo-bar-e053368fb2",
    );
    expect(
      lbcLoadBalancerName("c", { namespace: "my-ns.x", name: "a_long_service", uid: "u" }, "internal"),
    ).toMatch(/^k8s-mynsx-alongser-[0-9a-f]{10}$/);
  });
});

describe("deciding whether LBC's NLB can serve the Service in place", () => {
  test("a matching NLB and target group are adopted in place: the plan changes them, creates nothing and deletes nothing", () => {
    const desired = build();
    const adoption = decideAdoption(desired, lbc());
    expect(adoption).toMatchObject({
      kind: "adopt",
      targetGroups: [{ inPlace: true, desiredName: desired.targetGroups[0]!.name }],
      leftSecurityGroups: ["sg-lbc-frontend"],
    });
    expect(describeAdoption(adoption, false)).toEqual([
      `adopt NLB ${NLB_ARN} (the AWS Load Balancer Controller's) in place: k8s-shop-web-0123456789.elb.amazonaws.com stays`,
      "adopt target group k8s-shop-web-9876543210 (port 80, 1 target) in place",
      expect.stringMatching(
        /^keep security group sg-lbc-frontend as it is \(the AWS Load Balancer Controller's/,
      ),
    ]);
    const names = renamesOf(adoption)!;
    const nothing = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };
    const p = plan(renamed(desired, names), asTaken(nothing, adoption));
    expect(p.current?.arn).toBe(NLB_ARN);
    expect(p.replaced).toEqual([]);
    const kinds = p.operations.map((o) => o.kind);
    expect(kinds).not.toContain("createLoadBalancer");
    expect(kinds).not.toContain("createTargetGroup");
    expect(kinds).not.toContain("createListener");
    expect(kinds).not.toContain("deleteTargetGroup");
    // Today's node registered before the old one is deregistered.
    expect(kinds.indexOf("registerTargets")).toBeLessThan(kinds.indexOf("deregisterTargets"));
    // LBC's health check is the one Portico would make (Portico reads LBC's annotations as LBC does).
    expect(kinds).not.toContain("modifyHealthCheck");
  });

  test("adopting is the plan's first operation, said as the adoption is, and planned against what it retags", () => {
    const desired = build();
    const adoption = decideAdoption(desired, lbc());
    const lines = describeAdoption(adoption, false);
    const retag = takeOverOperation(adoption, lines)!;
    expect(retag.resources).toEqual([
      { arn: NLB_ARN, kind: "loadbalancer" },
      { arn: TG_ARN, kind: "targetgroup" },
    ]);
    const nothing = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };
    const p = plan(renamed(desired, renamesOf(adoption)!), asTaken(nothing, adoption), [retag]);
    expect(p.operations[0]).toBe(retag);
    expect(p.current?.arn).toBe(NLB_ARN);
    // porticoctl plan shows the adoption once, where the retagging happens.
    expect(describeOperations(p.operations).slice(0, lines.length)).toEqual(lines);
    // Nothing to retag when LBC's NLB is recreated beside, or there is nothing of LBC's.
    const recreate = decideAdoption(
      build({ "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" }),
      lbc(),
    );
    expect(recreate.kind).toBe("recreate");
    expect(takeOverOperation(recreate, [])).toBeUndefined();
    expect(takeOverOperation(decideAdoption(desired, { targetGroups: [] }), [])).toBeUndefined();
  });

  test("a take-over cut short between its tag calls is not observed twice", () => {
    const desired = build();
    const adoption = decideAdoption(desired, lbc());
    if (adoption.kind !== "adopt") throw new Error("expected an adoption");
    // Portico's tags went on, LBC's did not come off: observation already finds both as Portico's.
    const found = {
      loadBalancers: [adoption.loadBalancer!],
      targetGroups: adoption.targetGroups.map((f) => f.group.observed),
      securityGroups: [],
      backendRules: [],
    };
    const seen = asTaken(found, adoption);
    expect(seen.loadBalancers.map((lb) => lb.arn)).toEqual([NLB_ARN]);
    expect(seen.targetGroups.map((tg) => tg.arn)).toEqual([TG_ARN]);
    expect(asTaken(found, undefined)).toBe(found);
  });

  test("what cannot change on an NLB means a new one: scheme, address type, security groups", () => {
    expect(
      adoptionBlockers(
        build({ "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" }),
        lbcNlb(),
      ),
    ).toEqual(["it is internal and the Service asks for internet-facing (an NLB's scheme cannot change)"]);
    expect(adoptionBlockers(build(), lbcNlb({ ipAddressType: "dualstack" }))[0]).toMatch(
      /IP address type is dualstack/,
    );
    expect(adoptionBlockers(build(), lbcNlb({ securityGroups: [] }))[0]).toMatch(/without security groups/);
    expect(
      adoptionBlockers(
        build({ "service.beta.kubernetes.io/aws-load-balancer-disable-nlb-sg": "true" }),
        lbcNlb({ securityGroups: [] }),
      ),
    ).toEqual([]);
    const decided = decideAdoption(build(), lbc({ loadBalancer: lbcNlb({ scheme: "internet-facing" }) }));
    expect(decided.kind).toBe("recreate");
    expect(describeAdoption(decided, false)).toEqual([
      expect.stringMatching(/^recreate: NLB .* cannot serve the Service in place: it is internet-facing/),
      expect.stringMatching(/^refused until the controller runs with --aws-take-over-lbc-recreate/),
    ]);
    expect(describeAdoption(decided, true)[1]).toMatch(/^keep NLB k8s-\S+ as it is \(not Portico's/);
  });

  test("a target group that cannot serve its port as asked is taken to be replaced; a stale port's to be deleted", () => {
    const desired = build({ "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" });
    const adoption = decideAdoption(
      desired,
      lbc({
        targetGroups: [
          { observed: lbcGroup(), port: 80, ipAddressType: "ipv4" },
          {
            observed: lbcGroup({ arn: `${TG_ARN}-8443`, name: "k8s-shop-web-stale00000" }),
            port: 8443,
            ipAddressType: "ipv4",
          },
        ],
      }),
    );
    expect(adoption).toMatchObject({
      kind: "adopt",
      targetGroups: [
        { inPlace: false, reason: "its targets are instance targets, the Service asks for ip" },
        { inPlace: false, reason: "port 8443 is no longer a Service port" },
      ],
    });
    const nothing = { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] };
    const p = plan(renamed(desired, renamesOf(adoption)!), asTaken(nothing, adoption));
    const kinds = p.operations.map((o) => o.kind);
    // Portico's own group is made and the listener moved to it before LBC's (now Portico's) groups go.
    expect(kinds.indexOf("createTargetGroup")).toBeLessThan(kinds.indexOf("modifyListener"));
    expect(kinds.indexOf("modifyListener")).toBeLessThan(kinds.indexOf("deleteTargetGroup"));
    expect(p.operations.filter((o) => o.kind === "deleteTargetGroup")).toHaveLength(2);
  });

  test("nothing of LBC's: nothing to say", () => {
    expect(decideAdoption(build(), { targetGroups: [] })).toEqual({ kind: "none" });
    expect(describeAdoption({ kind: "none" }, false)).toEqual([]);
  });
});

describe("the taken-over names, found again from Portico's own observation", () => {
  const taken = (_d: DesiredLoadBalancer) => ({
    loadBalancers: [lbcNlb()],
    targetGroups: [lbcGroup()],
    securityGroups: [],
    backendRules: [],
  });

  test("LBC's name for the scheme, and the group each listener forwards to, stand for Portico's", () => {
    const desired = build();
    const names = adoptedNames(
      desired,
      taken(desired),
      lbcLoadBalancerName("prod", SERVICE, "internal"),
      SERVICE,
    )!;
    expect(names).toEqual({
      loadBalancer: lbcNlb().name,
      targetGroups: { [desired.targetGroups[0]!.name]: lbcGroup().name },
    });
    const p = plan(renamed(desired, names), taken(desired));
    expect(p.operations.map((o) => o.kind)).not.toContain("createLoadBalancer");
  });

  test("Portico's own NLB and target group, or an NLB of another scheme, are not renamed", () => {
    const desired = build();
    const ownGroup = lbcGroup({ name: desired.targetGroups[0]!.name });
    const own = {
      ...taken(desired),
      loadBalancers: [lbcNlb({ name: desired.name })],
      targetGroups: [ownGroup],
    };
    expect(
      adoptedNames(desired, own, lbcLoadBalancerName("prod", SERVICE, "internal"), SERVICE),
    ).toBeUndefined();
    const public_ = build({ "service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing" });
    expect(
      adoptedNames(public_, taken(public_), lbcLoadBalancerName("prod", SERVICE, "internet-facing"), SERVICE),
    ).toBeUndefined();
  });

  test("an NLB named by annotation keeps its name; the target group LBC named is still found as the port's", () => {
    const desired = build({ "service.beta.kubernetes.io/aws-load-balancer-name": "shop-web" });
    const observed = { ...taken(desired), loadBalancers: [lbcNlb({ name: "shop-web" })] };
    expect(
      adoptedNames(desired, observed, lbcLoadBalancerName("prod", SERVICE, "internal"), SERVICE),
    ).toEqual({
      targetGroups: { [desired.targetGroups[0]!.name]: lbcGroup().name },
    });
  });

  test("a target group Portico made for an earlier node port is not taken for the new one: the plan replaces it", () => {
    const desired = build();
    const earlier = desiredLoadBalancer(
      intent({ ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: 31999 }] }),
      parseAwsSettings({}, { scheme: "internal" }),
      NETWORK,
      "prod",
    ).targetGroups[0]!;
    const observed = {
      ...taken(desired),
      loadBalancers: [lbcNlb({ name: desired.name })],
      targetGroups: [lbcGroup({ name: earlier.name, port: 31999 })],
    };
    expect(earlier.name).not.toBe(desired.targetGroups[0]!.name);
    expect(
      adoptedNames(desired, observed, lbcLoadBalancerName("prod", SERVICE, "internal"), SERVICE),
    ).toBeUndefined();
  });

  test("a group whose target type no longer fits keeps Portico's name, so the plan replaces it", () => {
    const desired = build({ "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" });
    const names = adoptedNames(
      desired,
      taken(desired),
      lbcLoadBalancerName("prod", SERVICE, "internal"),
      SERVICE,
    )!;
    expect(names.targetGroups).toEqual({});
  });
});
