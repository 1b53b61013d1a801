// Every `service.beta.kubernetes.io/aws-load-balancer-*` key: the AWS Load Balancer Controller's documented NLB
// annotations, and the legacy in-tree cloud provider's keys users still carry from Classic Load Balancers.
import { PORTICO_ENTRIES } from "../../annotationKeys/portico.ts";
import {
  entriesUnder,
  implementedEntries,
  parserKeys,
  type ProviderAnnotations,
  type ProviderKeyFamily,
} from "../../annotationKeys/types.ts";

const P = "service.beta.kubernetes.io/aws-load-balancer-";
/** The AWS Load Balancer Controller's listener actions, under a prefix of their own. */
const ACTIONS = "service.beta.kubernetes.io/actions.";

const { refused } = entriesUnder(P);

/** The keys Portico reads, by the names providers/aws/annotations/ knows them by, with what each does. */
const READ = {
  type: [
    "type",
    "external and nlb change nothing (Portico makes an NLB); nlb-ip means ip targets; with --aws-take-over-lbc, unclassed Services of type external or nlb-ip are served",
  ],
  targetType: ["nlb-target-type", "instance (node ports, the default) or ip (pod IPs) targets"],
  scheme: [
    "scheme",
    "internal (the default) or internet-facing; a change replaces the NLB make-before-break",
  ],
  internal: ["internal", "the legacy spelling of scheme: true is internal, false internet-facing"],
  subnets: ["subnets", "the NLB's subnets, by ID or Name tag (otherwise discovered by role tags)"],
  name: ["name", "the NLB's name"],
  sslCert: [
    "ssl-cert",
    "one or more certificate ARNs: the first is the TLS listeners' default, the others are served by SNI",
  ],
  sslPorts: ["ssl-ports", "which ports get TLS listeners (all, when a certificate is set and this is not)"],
  sslPolicy: ["ssl-negotiation-policy", "the TLS listeners' security policy"],
  backendProtocol: ["backend-protocol", "ssl: TLS to the targets too; tcp: plain"],
  proxyProtocol: ["proxy-protocol", '"*": proxy protocol v2 on every target group'],
  crossZone: ["cross-zone-load-balancing-enabled", "the NLB's cross-zone load balancing"],
  targetGroupAttributes: ["target-group-attributes", "key=value attributes on every target group"],
  loadBalancerAttributes: ["attributes", "key=value attributes on the NLB"],
  additionalTags: ["additional-resource-tags", "extra tags on everything Portico makes for the Service"],
  ipAddressType: [
    "ip-address-type",
    "ipv4 or dualstack; a Service with an IPv6 family and ip targets needs dualstack and gets IPv6 targets",
  ],
  healthCheckProtocol: ["healthcheck-protocol", "TCP, HTTP or HTTPS health checks"],
  healthCheckPort: [
    "healthcheck-port",
    "the health-check port: a number, traffic-port, or a Service port's name",
  ],
  healthCheckPath: ["healthcheck-path", "the HTTP(S) health-check path"],
  healthCheckInterval: ["healthcheck-interval", "seconds between health checks"],
  healthCheckTimeout: ["healthcheck-timeout", "seconds a health check may take"],
  healthyThreshold: ["healthcheck-healthy-threshold", "checks passed before a target is healthy"],
  unhealthyThreshold: ["healthcheck-unhealthy-threshold", "checks failed before a target is unhealthy"],
  healthCheckSuccessCodes: ["healthcheck-success-codes", "the HTTP codes that pass a health check"],
  targetNodeLabels: ["target-node-labels", "only nodes matching this label selector are targets"],
  manageBackendRules: [
    "manage-backend-security-group-rules",
    "opens the targets' own security groups (the nodes' or the pods' interfaces') to the NLB on the traffic and health-check ports; on by default, off by default with security-groups",
  ],
  securityGroups: [
    "security-groups",
    "the NLB uses these security groups (IDs or Name tags); Portico makes none and never changes or deletes them",
  ],
  disableNlbSg: [
    "disable-nlb-sg",
    "an NLB without security groups (a change replaces the NLB make-before-break); backend rules then name addresses",
  ],
  eipAllocations: [
    "eip-allocations",
    "one Elastic IP per subnet (internet-facing only); a change replaces the NLB make-before-break",
  ],
  privateIPv4Addresses: [
    "private-ipv4-addresses",
    "one private address per subnet, inside its CIDR (internal only); a change replaces the NLB make-before-break",
  ],
  ipv6Addresses: [
    "ipv6-addresses",
    "one IPv6 address per subnet (dualstack only); a change replaces the NLB make-before-break",
  ],
  targetGroupAttributesPrefix: [
    "target-group-attributes.<port>",
    "attributes of that port's target group, over the unsuffixed ones (an empty value keeps them)",
  ],
  proxyProtocolPerTargetGroup: [
    "proxy-protocol-per-target-group",
    'proxy protocol v2 on the listed ports\' target groups only (proxy-protocol: "*" still covers all)',
  ],
  alpnPolicy: [
    "alpn-policy",
    "HTTP1Only, HTTP2Only, HTTP2Optional, HTTP2Preferred or None on the TLS listeners (refused without one)",
  ],
  listenerAttributesPrefix: [
    "listener-attributes.<proto>-<port>",
    "attributes of that listener, e.g. tcp.idle_timeout.seconds (removing the annotation leaves the value as it was)",
  ],
  prefixLists: [
    "security-group-prefix-lists",
    "the NLB's security group admits these managed prefix lists instead of everyone",
  ],
  accessLogEnabled: [
    "access-log-enabled",
    "NLB access logs to S3 (needs the bucket name); removing it turns them off",
  ],
  accessLogBucket: ["access-log-s3-bucket-name", "the access logs' S3 bucket"],
  accessLogPrefix: ["access-log-s3-bucket-prefix", "the access logs' prefix in the bucket"],
  privateLinkInboundRules: [
    "inbound-sg-rules-on-private-link-traffic",
    "on or off: whether PrivateLink traffic meets the NLB's security-group rules",
  ],
} as const;

/** The keys the AWS parser reads (a per-port key as its prefix, e.g. `…target-group-attributes.`). */
export const AWS_ANNOTATION_KEYS = parserKeys(P, READ);

export const AWS_KEYS: ProviderKeyFamily = {
  anchor: "AWS Load Balancer Controller",
  prefixes: [P, ACTIONS],
  entries: [
    ...implementedEntries(P, READ),
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
    {
      key: `${P}enable-tcp-udp-listener`,
      status: "noop",
      summary: "Portico always makes one TCP_UDP listener for a port the Service has in both TCP and UDP",
    },
    refused("quic-enabled-ports", "QUIC listeners are not offered; remove the annotation"),
    {
      key: `${ACTIONS}<proto>-<port>`,
      status: "refused",
      summary: "listener actions (weighted target groups) are not offered; remove the annotation",
    },
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

/** What the AWS provider reads: LBC's family, and Portico's own keys for target nodes and kube-proxy's check. */
export const AWS_ANNOTATION_CATALOG: ProviderAnnotations = {
  families: [AWS_KEYS],
  porticoKeys: [PORTICO_ENTRIES.targetNodeLabels, PORTICO_ENTRIES.kubeProxyHealthCheck],
};
