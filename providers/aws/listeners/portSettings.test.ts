// The finer AWS Load Balancer Controller annotations, from annotation to desired NLB and plan.
import { describe, expect, test } from "vitest";
import { parseAwsSettings } from "../annotations/settings.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import type { Observed, ObservedLoadBalancer } from "../model.ts";
import { plan } from "../plan.ts";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
const TWO_PORTS = intent({
  ports: [
    { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
    { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
  ],
});
const build = (
  annotations: Record<string, string>,
  i = TWO_PORTS,
  scheme: "internal" | "internet-facing" = "internal",
) => desiredLoadBalancer(i, parseAwsSettings(annotations, { scheme }), NETWORK, "prod");
const CERT = (n: number) => `arn:aws:acm:us-east-1:123456789012:certificate/c${n}`;

describe("security groups", () => {
  test("bring your own: no group of Portico's, the user's on the NLB, and a different name from disable-nlb-sg", () => {
    const own = build({ [`${P}security-groups`]: "sg-1,sg-2" });
    expect(own.securityGroup).toBeUndefined();
    expect(own.userSecurityGroups).toEqual(["sg-1", "sg-2"]);
    const none = build({ [`${P}disable-nlb-sg`]: "true" });
    expect(none.securityGroup).toBeUndefined();
    expect(none.userSecurityGroups).toEqual([]);
    // No security group cannot be had in place: another NLB (make-before-break), unlike the default's name.
    expect(none.name).not.toBe(build({}).name);
    expect(own.name).toBe(build({}).name);
  });

  test("both at once, or prefix lists without Portico's group, are refused naming the annotation", () => {
    expect(() => build({ [`${P}security-groups`]: "sg-1", [`${P}disable-nlb-sg`]: "true" })).toThrow(
      /disable-nlb-sg/,
    );
    expect(() =>
      build({ [`${P}security-groups`]: "sg-1", [`${P}security-group-prefix-lists`]: "pl-1" }),
    ).toThrow(/security-group-prefix-lists/);
  });

  test("prefix lists replace everyone (0.0.0.0/0); source ranges stay beside them", () => {
    const lb = build({ [`${P}security-group-prefix-lists`]: "pl-0abc" });
    expect(lb.securityGroup!.ingress.map((r) => `${r.port}/${r.cidr}`)).toEqual([
      "80/pl-0abc",
      "443/pl-0abc",
    ]);
    const ranged = build(
      { [`${P}security-group-prefix-lists`]: "pl-0abc" },
      { ...TWO_PORTS, sourceRanges: ["10.0.0.0/8"] },
    );
    expect(ranged.securityGroup!.ingress.map((r) => `${r.port}/${r.cidr}`)).toEqual([
      "80/10.0.0.0/8",
      "80/pl-0abc",
      "443/10.0.0.0/8",
      "443/pl-0abc",
    ]);
  });

  test("switching to the user's groups: set them, then delete Portico's group; the private-link setting rides along", () => {
    const before = build({});
    const after = build({
      [`${P}security-groups`]: "sg-user",
      [`${P}inbound-sg-rules-on-private-link-traffic`]: "off",
    });
    const p = plan(after, observedOf(before, ["sg-own"]));
    expect(p.operations.map((o) => o.kind)).toEqual(["setSecurityGroups", "deleteSecurityGroup"]);
    expect(p.operations[0]).toMatchObject({ groupIds: ["sg-user"], privateLink: "off" });
  });
});

test("private-link inbound rules: set right after creation, refused without security groups", () => {
  const lb = build({ [`${P}inbound-sg-rules-on-private-link-traffic`]: "on" });
  const p = plan(lb, { loadBalancers: [], targetGroups: [], securityGroups: [], backendRules: [] });
  const at = p.operations.findIndex((o) => o.kind === "createLoadBalancer");
  expect(p.operations[at + 1]).toEqual({ kind: "setSecurityGroups", groupIds: ["own"], privateLink: "on" });
  expect(() =>
    build({ [`${P}inbound-sg-rules-on-private-link-traffic`]: "on", [`${P}disable-nlb-sg`]: "true" }),
  ).toThrow(/inbound-sg-rules-on-private-link-traffic/);
  expect(() => build({ [`${P}inbound-sg-rules-on-private-link-traffic`]: "yes" })).toThrow(/on, off/);
});

describe("listeners", () => {
  test("several certificates: the first is the default; the others are added, removed ones removed", () => {
    const two = build({ [`${P}ssl-cert`]: `${CERT(1)},${CERT(2)}`, [`${P}ssl-ports`]: "443" });
    expect(two.listeners[1]!.certificateArns).toEqual([CERT(1), CERT(2)]);
    const three = build({ [`${P}ssl-cert`]: `${CERT(1)},${CERT(3)},${CERT(4)}`, [`${P}ssl-ports`]: "443" });
    const p = plan(three, observedOf(two));
    expect(p.operations).toEqual([
      { kind: "addListenerCertificates", listenerArn: "l-1", port: 443, certificateArns: [CERT(3), CERT(4)] },
      { kind: "removeListenerCertificates", listenerArn: "l-1", port: 443, certificateArns: [CERT(2)] },
    ]);
    // A new default certificate changes the listener itself; the old default stays as an extra one.
    const swapped = build({ [`${P}ssl-cert`]: `${CERT(2)},${CERT(1)}`, [`${P}ssl-ports`]: "443" });
    expect(plan(swapped, observedOf(two)).operations).toMatchObject([
      { kind: "modifyListener" },
      { kind: "addListenerCertificates", certificateArns: [CERT(1)] },
    ]);
    expect(plan(two, observedOf(two)).operations).toEqual([]);
  });

  test("ALPN on TLS listeners only; refused without any", () => {
    const lb = build({
      [`${P}ssl-cert`]: CERT(1),
      [`${P}ssl-ports`]: "443",
      [`${P}alpn-policy`]: "HTTP2Preferred",
    });
    expect(lb.listeners.map((l) => l.alpnPolicy)).toEqual([undefined, "HTTP2Preferred"]);
    expect(() => build({ [`${P}alpn-policy`]: "HTTP2Preferred" })).toThrow(/alpn-policy.*TLS listeners/);
    // Removed, the TLS listener goes back to None: a change; an unchanged one is not.
    const without = build({ [`${P}ssl-cert`]: CERT(1), [`${P}ssl-ports`]: "443" });
    expect(plan(without, observedOf(lb)).operations.map((o) => o.kind)).toEqual(["modifyListener"]);
    expect(plan(lb, observedOf(lb)).operations).toEqual([]);
    expect(() => build({ [`${P}alpn-policy`]: "h2" })).toThrow(/HTTP1Only/);
  });

  test("listener attributes go to the listener named <PROTOCOL>-<port>; changes are planned, others refused", () => {
    const lb = build({ [`${P}listener-attributes.TCP-80`]: "tcp.idle_timeout.seconds=400" });
    expect(lb.listeners[0]!.attributes).toEqual({ "tcp.idle_timeout.seconds": "400" });
    const changed = build({ [`${P}listener-attributes.TCP-80`]: "tcp.idle_timeout.seconds=500" });
    expect(plan(changed, observedOf(lb)).operations).toEqual([
      {
        kind: "modifyListenerAttributes",
        listenerArn: "l-0",
        port: 80,
        attributes: { "tcp.idle_timeout.seconds": "500" },
      },
    ]);
    expect(() => build({ [`${P}listener-attributes.UDP-80`]: "a=b" })).toThrow(/no UDP-80 listener/);
    expect(() => build({ [`${P}listener-attributes.tcp80`]: "a=b" })).toThrow(/<PROTOCOL>-<port>/);
  });
});

describe("target groups", () => {
  test("per-port attributes over the unsuffixed ones, an empty value keeping them; proxy protocol per port, * over all", () => {
    const attrs = (a: Record<string, string>) =>
      build(a).targetGroups.map((tg) => [
        tg.attributes["deregistration_delay.timeout_seconds"],
        tg.attributes["proxy_protocol_v2.enabled"],
      ]);
    expect(
      attrs({
        [`${P}target-group-attributes`]: "deregistration_delay.timeout_seconds=60",
        [`${P}target-group-attributes.443`]: "deregistration_delay.timeout_seconds=10",
        [`${P}target-group-attributes.80`]: "deregistration_delay.timeout_seconds=",
        [`${P}proxy-protocol-per-target-group`]: "443",
      }),
    ).toEqual([
      ["60", "false"],
      ["10", "true"],
    ]);
    expect(attrs({ [`${P}proxy-protocol-per-target-group`]: "443", [`${P}proxy-protocol`]: "*" })).toEqual([
      ["300", "true"],
      ["300", "true"],
    ]);
    expect(() =>
      build({ [`${P}target-group-attributes.8080`]: "deregistration_delay.timeout_seconds=5" }),
    ).toThrow(/no port 8080/);
    expect(() => build({ [`${P}proxy-protocol-per-target-group`]: "80,x" })).toThrow(/not a port number/);
  });

  test("a named health-check port is the node port (instance) or the pods' target port (ip)", () => {
    expect(build({ [`${P}healthcheck-port`]: "https" }).targetGroups[0]!.healthCheck.port).toBe("30443");
    const ip = build(
      { [`${P}healthcheck-port`]: "https", [`${P}nlb-target-type`]: "ip" },
      { ...TWO_PORTS, endpoints: [{ ip: "10.0.1.5", ports: { http: 8080, https: 8443 } }] },
    );
    expect(ip.targetGroups[0]!.healthCheck.port).toBe("8443");
    expect(() => build({ [`${P}healthcheck-port`]: "metrics" })).toThrow(/no port named "metrics"/);
  });
});

test("access logs become the NLB's access_logs.s3 attributes; enabled without a bucket is refused", () => {
  const lb = build({
    [`${P}access-log-enabled`]: "true",
    [`${P}access-log-s3-bucket-name`]: "logs",
    [`${P}access-log-s3-bucket-prefix`]: "nlb",
  });
  expect(lb.attributes).toMatchObject({
    "access_logs.s3.enabled": "true",
    "access_logs.s3.bucket": "logs",
    "access_logs.s3.prefix": "nlb",
  });
  expect(build({ [`${P}access-log-enabled`]: "false" }).attributes["access_logs.s3.enabled"]).toBe("false");
  expect(() => build({ [`${P}access-log-enabled`]: "true" })).toThrow(/access-log-s3-bucket-name/);
  // Removing the annotations turns the logs off again.
  expect(plan(build({}), observedOf(lb)).operations).toEqual([
    { kind: "modifyLoadBalancerAttributes", attributes: { "access_logs.s3.enabled": "false" } },
  ]);
});

/** The cloud once `d` has been applied exactly, with its security groups as given. */
function observedOf(d: ReturnType<typeof build>, groups = ["sg-own"]): Observed {
  const lb: ObservedLoadBalancer = {
    arn: "lb",
    name: d.name,
    dnsName: "x",
    scheme: d.scheme,
    state: "active",
    subnets: [...d.subnets],
    securityGroups: groups,
    ipAddressType: d.ipAddressType,
    subnetMappings: d.subnets.map((subnetId) => ({ subnetId })),
    attributes: { ...d.attributes },
    listeners: d.listeners.map((l, k) => ({
      arn: `l-${k}`,
      port: l.port,
      protocol: l.protocol,
      certificateArns: [...l.certificateArns],
      ...(l.alpnPolicy ? { alpnPolicy: l.alpnPolicy } : {}),
      attributes: { ...l.attributes },
      targetGroupArn: `tg-${k}`,
    })),
  };
  return {
    loadBalancers: [lb],
    targetGroups: d.targetGroups.map((tg, k) => ({
      arn: `tg-${k}`,
      name: tg.name,
      protocol: tg.protocol,
      port: tg.port,
      targetType: tg.targetType,
      healthCheck: { ...tg.healthCheck },
      attributes: { ...tg.attributes },
      targets: [...tg.targets],
      loadBalancerArns: ["lb"],
    })),
    securityGroups: [
      { id: "sg-own", name: build({}).securityGroup!.name, ingress: [...build({}).securityGroup!.ingress] },
    ],
    backendRules: [],
  };
}

test("an IPv6 Service's ip targets are its IPv6 endpoints in an ipv6 target group, on a dualstack NLB only", () => {
  const v6 = {
    ...TWO_PORTS,
    ipFamilies: ["IPv6" as const, "IPv4" as const],
    endpoints: [
      { ip: "10.0.1.5", ports: { http: 8080, https: 8443 } },
      { ip: "2600:1f18::5", ports: { http: 8080, https: 8443 } },
    ],
  };
  const ip = { [`${P}nlb-target-type`]: "ip", [`${P}ip-address-type`]: "dualstack" };
  const lb = build(ip, v6);
  expect(lb.targetGroups.map((tg) => [tg.ipAddressType, tg.targets.map((t) => t.id)])).toEqual([
    ["ipv6", ["2600:1f18::5"]],
    ["ipv6", ["2600:1f18::5"]],
  ]);
  // Another family is another target group (it cannot change in place).
  expect(lb.targetGroups[0]!.name).not.toBe(build(ip, { ...v6, ipFamilies: ["IPv4"] }).targetGroups[0]!.name);
  expect(build(ip, { ...v6, ipFamilies: ["IPv4"] }).targetGroups[0]!.targets.map((t) => t.id)).toEqual([
    "10.0.1.5",
  ]);
  expect(() => build({ [`${P}nlb-target-type`]: "ip" }, v6)).toThrow(/ip-address-type.*dualstack/);
});

test("an IPv6 Service's instance targets are the nodes in an ipv6 target group (their IPv6 node ports), on a dualstack NLB only", () => {
  const v6 = { ...TWO_PORTS, ipFamilies: ["IPv6" as const] };
  const dual = { [`${P}ip-address-type`]: "dualstack" };
  const lb = build(dual, v6);
  expect(lb.targetGroups.map((tg) => [tg.targetType, tg.ipAddressType])).toEqual([
    ["instance", "ipv6"],
    ["instance", "ipv6"],
  ]);
  expect(lb.targetGroups[0]!.targets).toEqual(
    build(dual, { ...v6, ipFamilies: ["IPv4"] }).targetGroups[0]!.targets,
  );
  expect(build(dual, { ...v6, ipFamilies: ["IPv4"] }).targetGroups[0]!.ipAddressType).toBeUndefined();
  expect(() => build({}, v6)).toThrow(/ip-address-type.*dualstack/);
  expect(() => build({}, v6)).toThrow(/IPv6 node ports/);
});

test("with a fixed name, what cannot change in place is refused instead of replacing the NLB", () => {
  const named = { [`${P}name`]: "web-nlb" };
  const before = build(named);
  expect(() => plan(build({ ...named, [`${P}disable-nlb-sg`]: "true" }), observedOf(before))).toThrow(
    /disable-nlb-sg.*remove the name annotation/,
  );
  const network = {
    vpcId: "vpc-1",
    subnets: ["subnet-a", "subnet-b"],
    cidrs: {
      "subnet-a": { ipv4: ["10.0.0.0/24"], ipv6: [] },
      "subnet-b": { ipv4: ["10.0.1.0/24"], ipv6: [] },
    },
  };
  const fixed = (ips: string) =>
    desiredLoadBalancer(
      TWO_PORTS,
      parseAwsSettings({ ...named, [`${P}private-ipv4-addresses`]: ips }, { scheme: "internal" }),
      network,
      "prod",
    );
  const observed = observedOf(fixed("10.0.0.5,10.0.1.5"));
  observed.loadBalancers[0]!.subnetMappings = [
    { subnetId: "subnet-a", privateIPv4Address: "10.0.0.5" },
    { subnetId: "subnet-b", privateIPv4Address: "10.0.1.5" },
  ];
  expect(plan(fixed("10.0.0.5,10.0.1.5"), observed).operations).toEqual([]);
  expect(() => plan(fixed("10.0.0.6,10.0.1.5"), observed)).toThrow(/other static addresses/);
});
