// The AWS settings that cannot work together. Each check reads the provider's own parsed settings, so what it
// judges is what the NLB would get; the first combination found refuses the Service, naming every field.
import type { AwsServiceSettings } from "./settings.ts";
import type { GroupProtocol } from "../model.ts";
import {
  checksOverHttp,
  defaultHttpCheckPort,
  KUBE_PROXY_HEALTH_PORT,
} from "../targetGroups/healthCheckDefaults.ts";
import { udpOnlyHealthChecks } from "../targetGroups/healthCheckReach.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { annotationField as field, type CombinationTable } from "../../annotationKeys/combinations.ts";

export interface AwsCombinationInput {
  intent: LoadBalancerIntent;
  settings: AwsServiceSettings;
  /** The NLB's listeners by port number: a TCP and a UDP port with the same number share a TCP_UDP listener. */
  listeners: readonly { port: number; protocol: GroupProtocol; names: readonly string[] }[];
}

const A = "service.beta.kubernetes.io/aws-load-balancer-";
const CERT = { [`${A}ssl-cert`]: "arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d" };
const TCP_AND_UDP = {
  ports: [
    { name: "https", port: 443, protocol: "TCP" },
    { name: "dns", port: 53, protocol: "UDP" },
  ],
};
const UDP_ONLY = { ports: [{ name: "dns", port: 53, protocol: "UDP" }] };

/** TLS listeners: with a certificate, the plain TCP listeners that ssl-ports names (all of them without it). */
function tlsListeners({ settings, listeners }: AwsCombinationInput) {
  if (!settings.certificateArns.length) return [];
  return listeners.filter(
    (l) =>
      l.protocol === "TCP" &&
      (!settings.sslPorts || settings.sslPorts.some((p) => p === String(l.port) || l.names.includes(p))),
  );
}

const listOf = (items: readonly string[]) => items.join(", ");

export const AWS_COMBINATIONS: CombinationTable<AwsCombinationInput> = {
  provider: "aws",
  entries: [
    {
      fields: ["spec.allocateLoadBalancerNodePorts", field(`${A}nlb-target-type`)],
      check: ({ intent, settings }) =>
        settings.targetType === "instance" && !intent.allocateNodePorts
          ? "instance targets need node ports, and this Service has allocateLoadBalancerNodePorts: false"
          : undefined,
      // Without the annotation such a Service gets ip targets (the provider's default when no node ports exist).
      fix: `use ip targets (annotation ${A}nlb-target-type: ip) or allow node ports`,
      reason: "NodePortsDisabled",
      example: {
        annotations: { [`${A}nlb-target-type`]: "instance" },
        spec: { allocateLoadBalancerNodePorts: false },
      },
    },
    {
      fields: ["spec.ipFamilies", field(`${A}ip-address-type`)],
      check: ({ intent, settings }) =>
        intent.ipFamilies.includes("IPv6") && settings.ipAddressType !== "dualstack"
          ? `this Service has an IPv6 family, so its targets are reached over IPv6 (${settings.targetType === "ip" ? "the pods' IPv6 addresses" : "the nodes' IPv6 node ports"}), which only a dualstack NLB does`
          : undefined,
      fix: `set ${A}ip-address-type: dualstack, or make the Service IPv4 only`,
      reason: "IPv6NeedsDualstack",
      example: { spec: { ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack" } },
    },
    {
      fields: ["spec.loadBalancerSourceRanges", field(`${A}ip-address-type`)],
      check: ({ intent, settings }) => {
        const v6 = intent.sourceRanges.filter((r) => r.includes(":"));
        if (settings.ipAddressType === "dualstack" || !v6.length) return undefined;
        return `${listOf(v6)} ${v6.length === 1 ? "is an IPv6 range" : "are IPv6 ranges"}, and an IPv4 NLB has no IPv6 address, so no client can come from ${v6.length === 1 ? "it" : "them"}`;
      },
      fix: `give IPv4 ranges, or make the NLB dualstack (${A}ip-address-type: dualstack)`,
      example: { spec: { loadBalancerSourceRanges: ["2001:db8::/32"] } },
    },
    {
      fields: [field(`${A}ssl-ports`), "spec.ports"],
      check: ({ settings, listeners }) => {
        const notTcp = listeners.filter(
          (l) =>
            l.protocol !== "TCP" &&
            (settings.sslPorts ?? []).some((p) => p === String(l.port) || l.names.includes(p)),
        );
        if (!notTcp.length || !settings.certificateArns.length) return undefined;
        return `TLS needs a TCP listener, and port ${listOf(notTcp.map((l) => `${l.port} (${l.protocol})`))} is not one: the certificate would be dropped there`;
      },
      fix: `name only TCP ports in ${A}ssl-ports (a UDP port, or a port number shared by TCP and UDP, cannot carry TLS)`,
      example: { annotations: { ...CERT, [`${A}ssl-ports`]: "53" }, spec: TCP_AND_UDP },
    },
    {
      fields: [field(`${A}ssl-cert`), "spec.ports"],
      check: (input) =>
        input.settings.certificateArns.length && !input.settings.sslPorts && !tlsListeners(input).length
          ? "a certificate is given, but the Service has no TCP port to terminate TLS on"
          : undefined,
      fix: "add a TCP port for TLS, or remove the certificate",
      example: { annotations: CERT, spec: UDP_ONLY },
    },
    {
      fields: [field(`${A}ssl-ports`), field(`${A}ssl-cert`)],
      check: ({ settings }) =>
        settings.sslPorts && !settings.certificateArns.length
          ? "TLS ports are named but no certificate is given"
          : undefined,
      fix: `set ${A}ssl-cert, or remove ${A}ssl-ports`,
      example: { annotations: { [`${A}ssl-ports`]: "443" } },
    },
    {
      fields: [field(`${A}ssl-negotiation-policy`), field(`${A}ssl-cert`)],
      check: (input) =>
        input.settings.sslPolicy && !tlsListeners(input).length
          ? "a TLS negotiation policy applies to TLS listeners, and this Service has none"
          : undefined,
      fix: `set ${A}ssl-cert (and ${A}ssl-ports) for TLS listeners, or remove the policy`,
      example: { annotations: { [`${A}ssl-negotiation-policy`]: "ELBSecurityPolicy-TLS13-1-2-2021-06" } },
    },
    {
      fields: [field(`${A}alpn-policy`), field(`${A}ssl-cert`)],
      check: (input) =>
        input.settings.alpnPolicy && !tlsListeners(input).length
          ? "an ALPN policy applies to TLS listeners, and this Service has none"
          : undefined,
      fix: `set ${A}ssl-cert (and ${A}ssl-ports) for TLS listeners, or remove the annotation`,
      example: { annotations: { [`${A}alpn-policy`]: "HTTP2Preferred" } },
    },
    {
      fields: [field(`${A}backend-protocol`), field(`${A}ssl-cert`)],
      check: (input) =>
        input.settings.backendTls && !tlsListeners(input).length
          ? "TLS to the targets (backend-protocol ssl) needs a TLS listener in front, and this Service has none"
          : undefined,
      fix: `set ${A}ssl-cert for TLS listeners, or use backend-protocol tcp`,
      example: { annotations: { [`${A}backend-protocol`]: "ssl" } },
    },
    {
      fields: ["spec.sessionAffinity", field(`${A}backend-protocol`)],
      check: (input) =>
        input.intent.clientIPAffinity && input.settings.backendTls && tlsListeners(input).length
          ? "ClientIP affinity is source-IP stickiness, which ELBv2 does not offer on TLS target groups"
          : undefined,
      fix: "use backend-protocol tcp (TLS ends at the NLB), or sessionAffinity: None",
      example: {
        annotations: { ...CERT, [`${A}backend-protocol`]: "ssl" },
        spec: { sessionAffinity: "ClientIP" },
      },
    },
    {
      fields: [field(`${A}healthcheck-path`), field(`${A}healthcheck-protocol`)],
      check: ({ intent, settings, listeners }) =>
        settings.healthCheck.path && !listeners.some((l) => checksOverHttp(intent, settings, l.protocol))
          ? "a path needs an HTTP or HTTPS health check, and this Service's checks are TCP"
          : undefined,
      fix: `set ${A}healthcheck-protocol to HTTP, or remove the path`,
      example: { annotations: { [`${A}healthcheck-path`]: "/ready" } },
    },
    {
      fields: [field(`${A}healthcheck-success-codes`), field(`${A}healthcheck-protocol`)],
      check: ({ intent, settings, listeners }) =>
        settings.healthCheck.successCodes &&
        !listeners.some((l) => checksOverHttp(intent, settings, l.protocol))
          ? "success codes belong to HTTP or HTTPS health checks, and this Service's checks are TCP"
          : undefined,
      fix: `set ${A}healthcheck-protocol to HTTP, or remove the success codes`,
      // kube-proxy's drain-aware check makes the default HTTP: the TCP protocol is what drops the codes.
      example: {
        annotations: {
          "portico.io/health-check-kube-proxy": "true",
          [`${A}healthcheck-protocol`]: "TCP",
          [`${A}healthcheck-success-codes`]: "200",
        },
      },
    },
    {
      fields: [field(`${A}healthcheck-port`), "spec.ports"],
      check: ({ intent, settings, listeners }) => {
        const found = udpOnlyHealthChecks(intent, settings, listeners);
        if (!found.length) return undefined;
        const chosen = settings.healthCheck.protocol;
        const protocol = (l: number) => {
          const group = listeners.find((x) => x.port === l)!.protocol;
          return chosen ?? (defaultHttpCheckPort(intent, settings, group) === undefined ? "TCP" : "HTTP");
        };
        const checks = found.map(
          (c) => `listener ${c.listener}'s ${protocol(c.listener)} health check connects to ${c.where}`,
        );
        return `${checks.join("; ")}. Every health check (${A}healthcheck-protocol${chosen ? `: ${chosen}` : " unset"}) opens a TCP connection, which nothing there answers: every target would be unhealthy`;
      },
      fix: `aim ${A}healthcheck-port at a port the targets answer over TCP: a TCP port of the Service by name, or a number (the pods' own health port, kube-proxy's ${KUBE_PROXY_HEALTH_PORT} on the nodes)`,
      reason: "InvalidHealthCheck",
      example: {
        annotations: { [`${A}healthcheck-protocol`]: "HTTP", [`${A}healthcheck-port`]: "dns" },
        spec: UDP_ONLY,
      },
    },
    {
      fields: [field(`${A}healthcheck-timeout`), field(`${A}healthcheck-interval`)],
      checkedIn: "providers/aws/targetGroups/healthCheck.ts (the interval may be the default)",
      fix: "make the timeout no longer than the interval",
      reason: "InvalidHealthCheck",
      example: {
        annotations: { [`${A}healthcheck-timeout`]: "30", [`${A}healthcheck-interval`]: "10" },
      },
    },
    {
      fields: [field(`${A}disable-nlb-sg`), field(`${A}security-groups`)],
      check: ({ settings }) =>
        settings.disableNlbSg && settings.securityGroups.length
          ? "the NLB cannot have no security group and the groups named"
          : undefined,
      fix: "remove one of the two annotations",
      example: { annotations: { [`${A}disable-nlb-sg`]: "true", [`${A}security-groups`]: "sg-0123" } },
    },
    {
      fields: [field(`${A}security-group-prefix-lists`), field(`${A}disable-nlb-sg`)],
      check: ({ settings }) =>
        settings.disableNlbSg && settings.prefixLists.length
          ? "prefix lists are added to the NLB's security group, and disable-nlb-sg leaves it none"
          : undefined,
      fix: "remove one of the two annotations",
      example: {
        annotations: { [`${A}disable-nlb-sg`]: "true", [`${A}security-group-prefix-lists`]: "pl-0123abcd" },
      },
    },
    {
      fields: [field(`${A}security-group-prefix-lists`), field(`${A}security-groups`)],
      check: ({ settings }) =>
        settings.securityGroups.length && settings.prefixLists.length
          ? "prefix lists are added to the security group Portico makes, and this Service brings its own"
          : undefined,
      fix: "add the prefix lists to your own security group and remove the annotation",
      example: {
        annotations: {
          [`${A}security-groups`]: "sg-0123",
          [`${A}security-group-prefix-lists`]: "pl-0123abcd",
        },
      },
    },
    {
      fields: [field(`${A}inbound-sg-rules-on-private-link-traffic`), field(`${A}disable-nlb-sg`)],
      check: ({ settings }) =>
        settings.privateLinkInboundRules && settings.disableNlbSg
          ? "it applies to the NLB's security groups, and disable-nlb-sg leaves it none"
          : undefined,
      fix: "remove one of the two annotations",
      example: {
        annotations: {
          [`${A}disable-nlb-sg`]: "true",
          [`${A}inbound-sg-rules-on-private-link-traffic`]: "off",
        },
      },
    },
    {
      fields: [field(`${A}eip-allocations`), field(`${A}scheme`)],
      check: ({ settings }) =>
        settings.eipAllocations.length && settings.scheme !== "internet-facing"
          ? "Elastic IPs are for internet-facing NLBs and this one is internal"
          : undefined,
      fix: `set ${A}scheme: internet-facing, or remove the Elastic IPs`,
      example: { annotations: { [`${A}eip-allocations`]: "eipalloc-0123,eipalloc-4567" } },
    },
    {
      fields: [field(`${A}private-ipv4-addresses`), field(`${A}scheme`)],
      check: ({ settings }) =>
        settings.privateIPv4Addresses.length && settings.scheme !== "internal"
          ? "private addresses are for internal NLBs and this one is internet-facing"
          : undefined,
      fix: `set ${A}scheme: internal, or remove the addresses`,
      example: {
        annotations: {
          [`${A}scheme`]: "internet-facing",
          [`${A}private-ipv4-addresses`]: "10.0.0.10,10.0.1.10",
        },
      },
    },
    {
      fields: [field(`${A}ipv6-addresses`), field(`${A}ip-address-type`)],
      check: ({ settings }) =>
        settings.ipv6Addresses.length && settings.ipAddressType !== "dualstack"
          ? "IPv6 addresses need a dualstack NLB"
          : undefined,
      fix: `set ${A}ip-address-type: dualstack, or remove the addresses`,
      example: { annotations: { [`${A}ipv6-addresses`]: "2001:db8::10,2001:db8:1::10" } },
    },
  ],
};
