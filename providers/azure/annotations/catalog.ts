// Every `service.beta.kubernetes.io/azure-*` key cloud-provider-azure reads, and its per-port
// `service.beta.kubernetes.io/port_<port>_<setting>` keys.
import { PORTICO_ENTRIES } from "../../annotationKeys/portico.ts";
import {
  entriesUnder,
  implementedEntries,
  parserKeys,
  type KeyEntry,
  type ProviderAnnotations,
  type ProviderKeyFamily,
} from "../../annotationKeys/types.ts";

const P = "service.beta.kubernetes.io/";
const PORT_KEY = "port_<port>_";

const { implemented, refused } = entriesUnder(P);

/** The keys Portico reads, by the names providers/azure/'s parsers know them by, with what each does. */
const READ = {
  internal: ["azure-load-balancer-internal", "an internal (private) frontend instead of a public IP"],
  internalSubnet: ["azure-load-balancer-internal-subnet", "the subnet of an internal frontend"],
  pipName: ["azure-pip-name", "use the user's public IP of that name (never modified or deleted)"],
  ipv4: ["azure-load-balancer-ipv4", "the address asked for: a public IP's, or a static private one"],
  resourceGroup: ["azure-load-balancer-resource-group", "where the user's public IP is found"],
  pipTags: ["azure-pip-tags", "extra tags on the public IP Portico makes"],
  disableFloatingIP: [
    "azure-disable-load-balancer-floating-ip",
    "floating IP (direct server return) off or on",
  ],
  idleTimeout: ["azure-load-balancer-tcp-idle-timeout", "the rules' idle timeout in minutes"],
  probeProtocol: ["azure-load-balancer-health-probe-protocol", "the probes' protocol"],
  probeRequestPath: ["azure-load-balancer-health-probe-request-path", "the HTTP(S) probes' path"],
  probeInterval: ["azure-load-balancer-health-probe-interval", "seconds between probes"],
  probeNumOfProbe: ["azure-load-balancer-health-probe-num-of-probe", "failed probes before a backend is out"],
  allowedServiceTags: ["azure-allowed-service-tags", "service tags allowed to connect, as security rules"],
  allowedIpRanges: [
    "azure-allowed-ip-ranges",
    "allow rules for exactly these CIDRs and no rule for Internet (not together with spec.loadBalancerSourceRanges, as cloud-provider-azure)",
  ],
  denyAllExceptSourceRanges: [
    "azure-deny-all-except-load-balancer-source-ranges",
    "a Deny rule for every other source, the virtual network included, below the Service's allows",
  ],
  dnsLabelName: [
    "azure-dns-label-name",
    "the DNS label <label>.<region>.cloudapp.azure.com of Portico's public IP (a user's public IP must carry it already)",
  ],
  ipTags: [
    "azure-pip-ip-tags",
    "IP tags (e.g. RoutingPreference=Internet) of the public IP Portico makes; fixed once made",
  ],
  disableTcpReset: [
    "azure-load-balancer-disable-tcp-reset",
    "true: no TCP reset on idle timeout (Portico's rules send them otherwise)",
  ],
  disableSecurityRules: [
    "azure-disable-load-balancer-nsg-rule",
    "no security rules for the Service (refused together with restrictions it could not enforce)",
  ],
  pipPrefixId: [
    "azure-pip-prefix-id",
    "Portico's public IP is made from this public IP prefix; fixed once made",
  ],
  pipPrefixIdIpv6: [
    "azure-pip-prefix-id-ipv6",
    "the IPv6 public IP prefix Portico's IPv6 public IP is made from",
  ],
  ipv6: [
    "azure-load-balancer-ipv6",
    "the IPv6 frontend's address: an existing IPv6 public IP's, or a static private one in the subnet's IPv6 range",
  ],
  configurations: [
    "azure-load-balancer-configurations",
    "the configured load balancers (multipleStandardLoadBalancerConfigurations) the Service may be placed on",
  ],
  pipNameIpv6: [
    "azure-pip-name-ipv6",
    "the user's own IPv6 public IP for the IPv6 frontend, never changed or deleted",
  ],
} as const;

/** The keys the Azure parsers read. */
export const AZURE_ANNOTATION_KEYS = parserKeys(P, READ);

/** The settings a per-port key `service.beta.kubernetes.io/port_<port>_<setting>` may name, with what each does. */
const PORT_READ = {
  "health-probe_protocol": "the probe protocol of one port",
  "health-probe_port": "the probed port of one port",
  "health-probe_request-path": "the probe path of one port",
  "health-probe_interval": "the probe interval of one port",
  "health-probe_num-of-probe": "the probe count of one port",
  no_lb_rule: "no rule and no probe for the port",
  no_probe_rule: "a rule without a probe for the port",
} as const;

export const AZURE_PORT_SETTINGS = Object.keys(PORT_READ);

/** Where every per-port key starts: `service.beta.kubernetes.io/port_`, then the Service port's number and `_`. */
export const AZURE_PORT_KEY_PREFIX = `${P}${PORT_KEY.split("<")[0]}`;

const privateLink = (suffix: string): KeyEntry =>
  refused(
    `azure-pls-${suffix}`,
    "Private Link services are not offered; create the Private Link service outside Portico and remove the annotation",
  );

export const AZURE_KEYS: ProviderKeyFamily = {
  anchor: "cloud-provider-azure",
  prefixes: [`${P}azure-`, `${P}port_`],
  entries: [
    ...implementedEntries(P, READ),
    ...Object.entries(PORT_READ).map(([setting, summary]) => implemented(`${PORT_KEY}${setting}`, summary)),
    refused(
      "azure-load-balancer-enable-high-availability-ports",
      "HA ports are not supported; list the ports in spec.ports instead",
    ),
    refused(
      "azure-load-balancer-mode",
      "Portico places Services itself (multipleStandardLoadBalancerConfigurations, azure-load-balancer-configurations); remove it",
    ),
    refused(
      "azure-shared-securityrule",
      "security rules shared between Services (Azure's augmented rules) are not offered: Portico writes each Service's own rules; remove the annotation",
    ),
    refused(
      "azure-load-balancer-mixed-protocols",
      "rules for both TCP and UDP on every port are not made from one protocol: list each protocol in spec.ports (Kubernetes allows both on one Service); remove the annotation",
    ),
    refused(
      "azure-additional-public-ips",
      "additional public IPs for floating-IP backends are not offered; remove the annotation",
    ),
    privateLink("create"),
    privateLink("resource-group"),
    privateLink("name"),
    privateLink("ip-configuration-subnet"),
    privateLink("ip-configuration-ip-address-count"),
    privateLink("ip-configuration-ip-address"),
    privateLink("fqdns"),
    privateLink("proxy-protocol"),
    privateLink("visibility"),
    privateLink("auto-approval"),
  ],
};

/** What the Azure provider reads: cloud-provider-azure's family, and Portico's own keys for its backends. */
export const AZURE_ANNOTATION_CATALOG: ProviderAnnotations = {
  families: [AZURE_KEYS],
  porticoKeys: [
    PORTICO_ENTRIES.targetNodeLabels,
    PORTICO_ENTRIES.kubeProxyHealthCheck,
    PORTICO_ENTRIES.targetType,
    PORTICO_ENTRIES.floatingIP,
  ],
};
