// Every annotation Portico implements has at least one bad value it is seen to refuse, naming the key — or a
// stated reason why no value is bad. A key added to the catalog without either fails here.
import { describe, expect, it } from "vitest";
import { buildIntent } from "../../controller/intent.ts";
import { ANNOTATIONS } from "../../providers/registry.ts";
import { parseAwsSettings } from "../../providers/aws/annotations/settings.ts";
import { CONFIGURATIONS_ANNOTATION, placeService } from "../../providers/azure/placement/eligibility.ts";
import { desiredLoadBalancer } from "../../providers/aws/loadBalancer/desired.ts";
import { ConfigurationError } from "../../providers/errors.ts";
import { Allocator } from "../../providers/metal/allocator.ts";
import { refusalText } from "../../providers/metal/allocationErrors.ts";
import { requestFromService } from "../../shared/request.ts";
import { intent as awsIntent, NETWORK } from "./support/awsIntent.ts";
import { desired as azureDesired, intent as azureIntent } from "./support/azure.ts";
import { service as svc } from "./support/controllerObjects.ts";
import { pool, service as metalService } from "./support/metal.ts";

const S = "service.beta.kubernetes.io/";
const A = `${S}aws-load-balancer-`;
const CERT = { [`${A}ssl-cert`]: "arn:aws:acm:us-east-1:111122223333:certificate/abc" };

/** The refusal's message (which names the field), or undefined when the annotations were accepted. */
type Refusal = (annotations: Record<string, string>) => string | undefined;

const caught = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof ConfigurationError) return err.message;
    throw err;
  }
};

const aws: Refusal = (annotations) =>
  caught(() => {
    const i = awsIntent({
      annotations,
      ports: [
        { name: "http", protocol: "TCP", port: 80, nodePort: 30080 },
        { name: "https", protocol: "TCP", port: 443, nodePort: 30443 },
      ],
    });
    desiredLoadBalancer(i, parseAwsSettings(annotations, { scheme: "internal" }), NETWORK, "prod");
  });
const azure: Refusal = (annotations) => caught(() => azureDesired(azureIntent({ annotations })));
/** Placement on one of several configured Azure load balancers (multipleStandardLoadBalancerConfigurations). */
const placement: Refusal = (annotations) =>
  caught(() =>
    placeService({
      configurations: [{ name: "lb-a" }, { name: "lb-b" }],
      requested: annotations[CONFIGURATIONS_ANNOTATION],
      serviceLabels: {},
      namespaceLabels: {},
      rules: new Map(),
    }),
  );
const intent: Refusal = (annotations) =>
  caught(() => buildIntent(svc({}, annotations), [], [], "portico.io/aws-nlb"));
const metal: Refusal = (annotations) => {
  const request = requestFromService({ annotations });
  if (!request.ok) return request.error.message;
  const result = new Allocator([pool("lan", { addresses: ["192.0.2.0/30"] })]).assign(
    metalService("ns/a"),
    request.request,
  );
  // The sentence users read: the field, once, before the allocator's message.
  return result.ok ? undefined : refusalText(result.error);
};

type Case = { check: Refusal; bad: Record<string, string>; key?: string } | { anyValue: string };

const CASES: Record<string, Case> = {
  [`${A}access-log-enabled`]: { check: aws, bad: { [`${A}access-log-enabled`]: "yes" } },
  [`${A}access-log-s3-bucket-name`]: {
    check: aws,
    bad: { [`${A}access-log-enabled`]: "true", [`${A}access-log-s3-bucket-name`]: "Not_A_Bucket!" },
  },
  [`${A}access-log-s3-bucket-prefix`]: { anyValue: "any prefix is a valid S3 key prefix" },
  [`${A}additional-resource-tags`]: {
    check: aws,
    bad: { [`${A}additional-resource-tags`]: "portico.io/x=y" },
  },
  [`${A}alpn-policy`]: { check: aws, bad: { ...CERT, [`${A}alpn-policy`]: "HTTP3" } },
  [`${A}attributes`]: { check: aws, bad: { [`${A}attributes`]: "deletion_protection.enabled=maybe" } },
  [`${A}backend-protocol`]: { check: aws, bad: { [`${A}backend-protocol`]: "http" } },
  [`${A}cross-zone-load-balancing-enabled`]: {
    check: aws,
    bad: { [`${A}cross-zone-load-balancing-enabled`]: "1" },
  },
  [`${A}disable-nlb-sg`]: { check: aws, bad: { [`${A}disable-nlb-sg`]: "sometimes" } },
  [`${A}eip-allocations`]: { check: aws, bad: { [`${A}eip-allocations`]: "10.0.0.1,10.0.0.2" } },
  [`${A}healthcheck-healthy-threshold`]: { check: aws, bad: { [`${A}healthcheck-healthy-threshold`]: "11" } },
  [`${A}healthcheck-interval`]: { check: aws, bad: { [`${A}healthcheck-interval`]: "1" } },
  [`${A}healthcheck-path`]: {
    check: aws,
    bad: { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-path`]: "healthz" },
  },
  [`${A}healthcheck-port`]: { check: aws, bad: { [`${A}healthcheck-port`]: "grpc" } },
  [`${A}healthcheck-protocol`]: { check: aws, bad: { [`${A}healthcheck-protocol`]: "UDP" } },
  [`${A}healthcheck-success-codes`]: { check: aws, bad: { [`${A}healthcheck-success-codes`]: "2xx" } },
  [`${A}healthcheck-timeout`]: { check: aws, bad: { [`${A}healthcheck-timeout`]: "0" } },
  [`${A}healthcheck-unhealthy-threshold`]: {
    check: aws,
    bad: { [`${A}healthcheck-unhealthy-threshold`]: "1" },
  },
  [`${A}inbound-sg-rules-on-private-link-traffic`]: {
    check: aws,
    bad: { [`${A}inbound-sg-rules-on-private-link-traffic`]: "maybe" },
  },
  [`${A}internal`]: { check: aws, bad: { [`${A}internal`]: "yes" } },
  [`${A}ip-address-type`]: { check: aws, bad: { [`${A}ip-address-type`]: "ipv6" } },
  [`${A}ipv6-addresses`]: { check: aws, bad: { [`${A}ipv6-addresses`]: "not-an-address" } },
  [`${A}listener-attributes.<proto>-<port>`]: {
    check: aws,
    key: `${A}listener-attributes.SCTP-80`,
    bad: { [`${A}listener-attributes.SCTP-80`]: "tcp.idle_timeout.seconds=60" },
  },
  [`${A}manage-backend-security-group-rules`]: {
    check: aws,
    bad: { [`${A}manage-backend-security-group-rules`]: "1" },
  },
  [`${A}name`]: { check: aws, bad: { [`${A}name`]: "-bad-name" } },
  [`${A}nlb-target-type`]: { check: aws, bad: { [`${A}nlb-target-type`]: "pod" } },
  [`${A}private-ipv4-addresses`]: { check: aws, bad: { [`${A}private-ipv4-addresses`]: "10.0.0.999" } },
  [`${A}proxy-protocol`]: { check: aws, bad: { [`${A}proxy-protocol`]: "v1" } },
  [`${A}proxy-protocol-per-target-group`]: {
    check: aws,
    bad: { [`${A}proxy-protocol-per-target-group`]: "8080" },
  },
  [`${A}scheme`]: { check: aws, bad: { [`${A}scheme`]: "public" } },
  [`${A}security-group-prefix-lists`]: {
    check: aws,
    bad: { [`${A}security-group-prefix-lists`]: "10.0.0.0/8" },
  },
  [`${A}security-groups`]: {
    anyValue:
      "IDs or Name tags; a group that does not exist is found missing when looked up (integration: securityGroups.test.ts)",
  },
  [`${A}ssl-cert`]: { check: aws, bad: { [`${A}ssl-cert`]: "my-certificate" } },
  [`${A}ssl-negotiation-policy`]: {
    anyValue: "ELBv2 names its policies; an unknown one is refused by ELBv2 itself (CloudRejected)",
  },
  [`${A}ssl-ports`]: { check: aws, bad: { ...CERT, [`${A}ssl-ports`]: "8443" } },
  [`${A}subnets`]: {
    anyValue:
      "IDs or Name tags; one that does not exist is refused when resolved (integration: errors.test.ts)",
  },
  [`${A}target-group-attributes`]: {
    check: aws,
    bad: { [`${A}target-group-attributes`]: "stickiness.type=lb_cookie" },
  },
  [`${A}target-group-attributes.<port>`]: {
    check: aws,
    key: `${A}target-group-attributes.8080`,
    bad: { [`${A}target-group-attributes.8080`]: "deregistration_delay.timeout_seconds=5" },
  },
  [`${A}target-node-labels`]: { check: intent, bad: { [`${A}target-node-labels`]: "pool in edge" } },
  [`${A}type`]: { check: aws, bad: { [`${A}type`]: "alb" } },
  [`${S}azure-allowed-ip-ranges`]: { check: azure, bad: { [`${S}azure-allowed-ip-ranges`]: "10.0.0.1/8" } },
  [`${S}azure-allowed-service-tags`]: {
    check: azure,
    bad: { [`${S}azure-allowed-service-tags`]: "not a tag!" },
  },
  [`${S}azure-deny-all-except-load-balancer-source-ranges`]: {
    check: azure,
    bad: { [`${S}azure-deny-all-except-load-balancer-source-ranges`]: "true" },
  },
  [`${S}azure-disable-load-balancer-floating-ip`]: {
    check: azure,
    bad: { [`${S}azure-disable-load-balancer-floating-ip`]: "no" },
  },
  [`${S}azure-disable-load-balancer-nsg-rule`]: {
    check: azure,
    bad: { [`${S}azure-disable-load-balancer-nsg-rule`]: "no" },
  },
  [`${S}azure-dns-label-name`]: { check: azure, bad: { [`${S}azure-dns-label-name`]: "Bad_Label-" } },
  [`${S}azure-load-balancer-configurations`]: {
    check: placement,
    bad: { [`${S}azure-load-balancer-configurations`]: "lb-nowhere" },
  },
  [`${S}azure-load-balancer-disable-tcp-reset`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-disable-tcp-reset`]: "yes" },
  },
  [`${S}azure-load-balancer-health-probe-interval`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-health-probe-interval`]: "1" },
  },
  [`${S}azure-load-balancer-health-probe-num-of-probe`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-health-probe-num-of-probe`]: "0" },
  },
  [`${S}azure-load-balancer-health-probe-protocol`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-health-probe-protocol`]: "udp" },
  },
  [`${S}azure-load-balancer-health-probe-request-path`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-health-probe-request-path`]: "healthz" },
  },
  [`${S}azure-load-balancer-internal`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-internal`]: "yes" },
  },
  [`${S}azure-load-balancer-internal-subnet`]: {
    check: azure,
    bad: {
      [`${S}azure-load-balancer-internal`]: "true",
      [`${S}azure-load-balancer-internal-subnet`]: "bad/name",
    },
  },
  [`${S}azure-load-balancer-ipv4`]: { check: azure, bad: { [`${S}azure-load-balancer-ipv4`]: "10.0.0.999" } },
  [`${S}azure-load-balancer-resource-group`]: {
    anyValue: "a resource group name; a missing one is found when the public IP is looked up",
  },
  [`${S}azure-load-balancer-tcp-idle-timeout`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-tcp-idle-timeout`]: "200" },
  },
  [`${S}azure-pip-ip-tags`]: { check: azure, bad: { [`${S}azure-pip-ip-tags`]: "RoutingPreference" } },
  [`${S}azure-pip-name`]: { check: azure, bad: { [`${S}azure-pip-name`]: "bad/name" } },
  [`${S}azure-pip-prefix-id`]: { check: azure, bad: { [`${S}azure-pip-prefix-id`]: "my-prefix" } },
  [`${S}azure-pip-tags`]: { check: azure, bad: { [`${S}azure-pip-tags`]: "a/b=c" } },
  [`${S}port_<port>_health-probe_interval`]: {
    check: azure,
    key: `${S}port_80_health-probe_interval`,
    bad: { [`${S}port_80_health-probe_interval`]: "1" },
  },
  [`${S}port_<port>_health-probe_num-of-probe`]: {
    check: azure,
    key: `${S}port_80_health-probe_num-of-probe`,
    bad: { [`${S}port_80_health-probe_num-of-probe`]: "0" },
  },
  [`${S}port_<port>_health-probe_port`]: {
    check: azure,
    key: `${S}port_80_health-probe_port`,
    bad: { [`${S}port_80_health-probe_port`]: "Not A Port" },
  },
  [`${S}port_<port>_health-probe_protocol`]: {
    check: azure,
    key: `${S}port_80_health-probe_protocol`,
    bad: { [`${S}port_80_health-probe_protocol`]: "udp" },
  },
  [`${S}port_<port>_health-probe_request-path`]: {
    check: azure,
    key: `${S}port_80_health-probe_request-path`,
    bad: { [`${S}port_80_health-probe_request-path`]: "healthz" },
  },
  [`${S}port_<port>_no_lb_rule`]: {
    check: azure,
    key: `${S}port_80_no_lb_rule`,
    bad: { [`${S}port_80_no_lb_rule`]: "yes" },
  },
  [`${S}port_<port>_no_probe_rule`]: {
    check: azure,
    key: `${S}port_80_no_probe_rule`,
    bad: { [`${S}port_80_no_probe_rule`]: "yes" },
  },
  "metallb.io/address-pool": { check: metal, bad: { "metallb.io/address-pool": "nowhere" } },
  "metallb.universe.tf/address-pool": {
    check: metal,
    bad: { "metallb.universe.tf/address-pool": "nowhere" },
  },
  "portico.io/address-pool": { check: metal, bad: { "portico.io/address-pool": "nowhere" } },
  "metallb.io/loadBalancerIPs": { check: metal, bad: { "metallb.io/loadBalancerIPs": "192.0.2.999" } },
  "metallb.universe.tf/loadBalancerIPs": {
    check: metal,
    bad: { "metallb.universe.tf/loadBalancerIPs": "192.0.2.999" },
  },
  "portico.io/loadBalancerIPs": { check: metal, bad: { "portico.io/loadBalancerIPs": "192.0.2.999" } },
  "metallb.io/allow-shared-ip": {
    anyValue:
      "a sharing key is any string; Services with one key and clashing ports are refused (allocator.sharing.test.ts)",
  },
  "metallb.universe.tf/allow-shared-ip": { anyValue: "as metallb.io/allow-shared-ip" },
  "portico.io/allow-shared-ip": { anyValue: "as metallb.io/allow-shared-ip" },
  "portico.io/floating-ip": { check: azure, bad: { "portico.io/floating-ip": "on" } },
  "portico.io/health-check-kube-proxy": { check: aws, bad: { "portico.io/health-check-kube-proxy": "on" } },
  "portico.io/managed-by": { anyValue: "written by Portico itself, not by users" },
  "portico.io/ip-allocated-from-pool": { anyValue: "written by Portico itself, not by users" },
  "metallb.io/ip-allocated-from-pool": {
    anyValue:
      "MetalLB's record; a name that holds no address of the Service is passed over (records.test.ts)",
  },
  "metallb.universe.tf/ip-allocated-from-pool": { anyValue: "as metallb.io/ip-allocated-from-pool" },
  [`${S}azure-load-balancer-ipv6`]: {
    check: azure,
    bad: { [`${S}azure-load-balancer-ipv6`]: "2001:db8::1" },
  },
  [`${S}azure-pip-name-ipv6`]: { check: azure, bad: { [`${S}azure-pip-name-ipv6`]: "bad/name" } },
  [`${S}azure-pip-prefix-id-ipv6`]: { check: azure, bad: { [`${S}azure-pip-prefix-id-ipv6`]: "my-prefix" } },
  "portico.io/target-node-labels": {
    check: intent,
    bad: { "portico.io/target-node-labels": "pool in edge" },
  },
  "portico.io/target-type": { check: azure, bad: { "portico.io/target-type": "pod" } },
};

describe("every implemented key has a bad value Portico refuses", () => {
  const implemented = ANNOTATIONS.families.flatMap((f) =>
    f.entries.filter((e) => e.status === "implemented").map((e) => e.key),
  );

  it("has a case for every implemented key, and none for a key the catalog does not implement", () => {
    expect(Object.keys(CASES).sort()).toEqual([...implemented].sort());
  });

  for (const [entry, c] of Object.entries(CASES)) {
    if ("anyValue" in c) continue;
    it(`${entry}: ${JSON.stringify(Object.values(c.bad).at(-1))} is refused, naming it`, () => {
      const refusal = c.check(c.bad);
      expect(refusal).toBeDefined();
      expect(refusal).toContain(c.key ?? entry);
    });
  }
});
