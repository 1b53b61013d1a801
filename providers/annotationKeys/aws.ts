// Every `service.beta.kubernetes.io/aws-load-balancer-*` key: the AWS Load Balancer Controller's documented NLB
// annotations, and the legacy in-tree cloud provider's keys users still carry from Classic Load Balancers.
import type { KeyEntry, KeyFamily } from "./types.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";

const implemented = (suffix: string, summary: string): KeyEntry => ({
  key: P + suffix,
  status: "implemented",
  summary,
});
const refused = (suffix: string, summary: string): KeyEntry => ({
  key: P + suffix,
  status: "refused",
  summary,
});
const noop = (suffix: string, summary: string): KeyEntry => ({ key: P + suffix, status: "noop", summary });

export const AWS_KEYS: KeyFamily = {
  anchor: "AWS Load Balancer Controller",
  prefixes: [P],
  providers: ["aws"],
  entries: [
    noop(
      "type",
      'Portico makes an NLB for every Service it serves; "external" and "nlb" ask for just that (use nlb-target-type for ip targets)',
    ),
    implemented("nlb-target-type", "instance (node ports, the default) or ip (pod IPs) targets"),
    implemented(
      "scheme",
      "internal (the default) or internet-facing; a change replaces the NLB make-before-break",
    ),
    implemented("internal", "the legacy spelling of scheme: true is internal, false internet-facing"),
    implemented("subnets", "the NLB's subnets, by ID or Name tag (otherwise discovered by role tags)"),
    implemented("name", "the NLB's name"),
    implemented("ssl-cert", "the TLS listeners' certificate ARN"),
    implemented(
      "ssl-ports",
      "which ports get TLS listeners (all, when a certificate is set and this is not)",
    ),
    implemented("ssl-negotiation-policy", "the TLS listeners' security policy"),
    implemented("backend-protocol", "ssl: TLS to the targets too; tcp: plain"),
    implemented("proxy-protocol", '"*": proxy protocol v2 on every target group'),
    implemented("cross-zone-load-balancing-enabled", "the NLB's cross-zone load balancing"),
    implemented("target-group-attributes", "key=value attributes on every target group"),
    implemented("attributes", "key=value attributes on the NLB"),
    implemented("additional-resource-tags", "extra tags on everything Portico makes for the Service"),
    implemented("ip-address-type", "ipv4 or dualstack"),
    implemented("healthcheck-protocol", "TCP, HTTP or HTTPS health checks"),
    implemented("healthcheck-port", "the health-check port: a number or traffic-port"),
    implemented("healthcheck-path", "the HTTP(S) health-check path"),
    implemented("healthcheck-interval", "seconds between health checks"),
    implemented("healthcheck-timeout", "seconds a health check may take"),
    implemented("healthcheck-healthy-threshold", "checks passed before a target is healthy"),
    implemented("healthcheck-unhealthy-threshold", "checks failed before a target is unhealthy"),
    implemented("healthcheck-success-codes", "the HTTP codes that pass a health check"),
    implemented("target-node-labels", "only nodes matching this label selector are targets"),
    refused(
      "manage-backend-security-group-rules",
      "not implemented yet: open the nodes' (or pods') security groups to the NLB yourself, and remove the annotation",
    ),
    refused(
      "security-groups",
      "bring-your-own NLB security groups are not implemented yet; remove the annotation",
    ),
    refused("disable-nlb-sg", "NLBs without a security group are not implemented yet; remove the annotation"),
    refused(
      "eip-allocations",
      "static addresses through subnet mappings are not implemented yet; remove the annotation",
    ),
    refused(
      "private-ipv4-addresses",
      "static addresses through subnet mappings are not implemented yet; remove the annotation",
    ),
    refused(
      "ipv6-addresses",
      "static addresses through subnet mappings are not implemented yet; remove the annotation",
    ),
    refused(
      "target-group-attributes.<port>",
      "per-port target group attributes are not implemented yet; use target-group-attributes for every port",
    ),
    refused(
      "proxy-protocol-per-target-group",
      'per-port proxy protocol is not implemented yet; use proxy-protocol: "*" for every port',
    ),
    refused("alpn-policy", "ALPN policies are not implemented yet; remove the annotation"),
    refused(
      "listener-attributes.<proto>-<port>",
      "listener attributes are not implemented yet; remove the annotation",
    ),
    refused(
      "security-group-prefix-lists",
      "prefix lists are not implemented yet; use spec.loadBalancerSourceRanges with the CIDRs",
    ),
    refused(
      "access-log-enabled",
      "use attributes: access_logs.s3.enabled=true,access_logs.s3.bucket=...,access_logs.s3.prefix=...",
    ),
    refused("access-log-s3-bucket-name", "use attributes: access_logs.s3.bucket=..."),
    refused("access-log-s3-bucket-prefix", "use attributes: access_logs.s3.prefix=..."),
    refused(
      "inbound-sg-rules-on-private-link-traffic",
      "Portico does not change how PrivateLink traffic meets the NLB's security group; remove the annotation",
    ),
    refused(
      "multi-cluster-target-group",
      "target groups shared between clusters need TargetGroupBindings, which Portico does not offer; remove it",
    ),
    refused(
      "enable-prefix-for-ipv6-source-nat",
      "IPv6 source NAT prefixes (UDP over dual-stack) are not offered; remove the annotation",
    ),
    refused("source-nat-ipv6-prefixes", "IPv6 source NAT prefixes are not offered; remove the annotation"),
    refused(
      "minimum-load-balancer-capacity",
      "capacity reservations are not offered; reserve capacity on the NLB outside Portico and remove the annotation",
    ),
    refused(
      "enable-icmp-for-path-mtu-discovery",
      "Portico does not open ICMP on the NLB's security group; remove the annotation",
    ),
    refused(
      "enable-tcp-udp-listener",
      "TCP_UDP listeners are not offered: give the TCP and UDP ports different port numbers, or remove the annotation",
    ),
    refused("quic-enabled-ports", "QUIC listeners are not offered; remove the annotation"),
    // The in-tree cloud provider's Classic Load Balancer keys.
    refused(
      "connection-draining-enabled",
      "a Classic Load Balancer setting: NLB target groups always drain; set target-group-attributes deregistration_delay.timeout_seconds",
    ),
    refused(
      "connection-draining-timeout",
      "a Classic Load Balancer setting: use target-group-attributes deregistration_delay.timeout_seconds=N",
    ),
    refused(
      "connection-idle-timeout",
      "a Classic Load Balancer setting: NLBs have no such idle timeout to set per Service; remove the annotation",
    ),
    refused(
      "access-log-emit-interval",
      "a Classic Load Balancer setting: NLB access logs have no emit interval; remove the annotation",
    ),
    refused(
      "extra-security-groups",
      "a Classic Load Balancer setting: Portico does not attach extra security groups to the NLB; remove the annotation",
    ),
  ],
};
