// Every `service.beta.kubernetes.io/azure-*` key cloud-provider-azure reads, and its per-port
// `service.beta.kubernetes.io/port_<port>_<setting>` keys.
import { entriesUnder, type KeyEntry, type KeyFamily } from "./types.ts";

const P = "service.beta.kubernetes.io/";

const { implemented, refused } = entriesUnder(P);

const privateLink = (suffix: string): KeyEntry =>
  refused(
    `azure-pls-${suffix}`,
    "Private Link services are not offered; create the Private Link service outside Portico and remove the annotation",
  );

export const AZURE_KEYS: KeyFamily = {
  anchor: "cloud-provider-azure",
  prefixes: [`${P}azure-`, `${P}port_`],
  providers: ["azure"],
  entries: [
    implemented("azure-load-balancer-internal", "an internal (private) frontend instead of a public IP"),
    implemented("azure-load-balancer-internal-subnet", "the subnet of an internal frontend"),
    implemented("azure-pip-name", "use the user's public IP of that name (never modified or deleted)"),
    implemented("azure-load-balancer-ipv4", "the address asked for: a public IP's, or a static private one"),
    implemented("azure-load-balancer-resource-group", "where the user's public IP is found"),
    implemented("azure-pip-tags", "extra tags on the public IP Portico makes"),
    implemented("azure-disable-load-balancer-floating-ip", "floating IP (direct server return) off or on"),
    implemented("azure-load-balancer-tcp-idle-timeout", "the rules' idle timeout in minutes"),
    implemented("azure-load-balancer-health-probe-protocol", "the probes' protocol"),
    implemented("azure-load-balancer-health-probe-request-path", "the HTTP(S) probes' path"),
    implemented("azure-load-balancer-health-probe-interval", "seconds between probes"),
    implemented("azure-load-balancer-health-probe-num-of-probe", "failed probes before a backend is out"),
    implemented("azure-allowed-service-tags", "service tags allowed to connect, as security rules"),
    implemented("port_<port>_health-probe_protocol", "the probe protocol of one port"),
    implemented("port_<port>_health-probe_port", "the probed port of one port"),
    implemented("port_<port>_health-probe_request-path", "the probe path of one port"),
    implemented("port_<port>_health-probe_interval", "the probe interval of one port"),
    implemented("port_<port>_health-probe_num-of-probe", "the probe count of one port"),
    implemented("port_<port>_no_lb_rule", "no rule and no probe for the port"),
    implemented("port_<port>_no_probe_rule", "a rule without a probe for the port"),
    implemented(
      "azure-allowed-ip-ranges",
      "allow rules for exactly these CIDRs and no rule for Internet (not together with spec.loadBalancerSourceRanges, as cloud-provider-azure)",
    ),
    implemented(
      "azure-deny-all-except-load-balancer-source-ranges",
      "a Deny rule for every other source, the virtual network included, below the Service's allows",
    ),
    implemented(
      "azure-dns-label-name",
      "the DNS label <label>.<region>.cloudapp.azure.com of Portico's public IP (a user's public IP must carry it already)",
    ),
    implemented(
      "azure-pip-ip-tags",
      "IP tags (e.g. RoutingPreference=Internet) of the public IP Portico makes; fixed once made",
    ),
    implemented(
      "azure-load-balancer-disable-tcp-reset",
      "true: no TCP reset on idle timeout (Portico's rules send them otherwise)",
    ),
    implemented(
      "azure-disable-load-balancer-nsg-rule",
      "no security rules for the Service (refused together with restrictions it could not enforce)",
    ),
    implemented(
      "azure-pip-prefix-id",
      "Portico's public IP is made from this public IP prefix; fixed once made",
    ),
    implemented(
      "azure-pip-prefix-id-ipv6",
      "the IPv6 public IP prefix Portico's IPv6 public IP is made from",
    ),
    implemented(
      "azure-load-balancer-ipv6",
      "the IPv6 frontend's address: an existing IPv6 public IP's, or a static private one in the subnet's IPv6 range",
    ),
    implemented(
      "azure-load-balancer-configurations",
      "the configured load balancers (multipleStandardLoadBalancerConfigurations) the Service may be placed on",
    ),
    implemented(
      "azure-pip-name-ipv6",
      "the user's own IPv6 public IP for the IPv6 frontend, never changed or deleted",
    ),
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
