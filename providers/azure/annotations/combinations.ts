// The Azure settings that cannot work together. Each check reads the provider's own parsed settings, its
// configuration and the probes it chose (probes.ts), so what it judges is what the load balancer would get.
import type { AzureServiceSettings } from "./settings.ts";
import type { AzureConfig } from "../config.ts";
import type { LoadBalancerIntent } from "../../provider.ts";
import { sourceRangesField } from "./fields.ts";
import { annotationField as field, type CombinationTable } from "../../annotationKeys/combinations.ts";

export interface AzureCombinationInput {
  intent: LoadBalancerIntent;
  settings: AzureServiceSettings;
  config: AzureConfig;
  /** The probe protocol each Service port with a rule gets (undefined: the rule goes without a probe). */
  probes: readonly { port: number; protocol?: "Tcp" | "Http" | "Https" }[];
}

const S = "service.beta.kubernetes.io/";
const INTERNAL = `${S}azure-load-balancer-internal`;
const CONFIGURATIONS = `${S}azure-load-balancer-configurations`;
const CONFIG_FIELD = "multipleStandardLoadBalancerConfigurations (the controller's Azure config)";
const FAMILY_OF = (range: string) => (range.includes(":") ? "IPv6" : "IPv4");

/** Per-port probe paths, and the global one on ports without their own. */
function pathsOnTcpProbes({ settings, probes }: AzureCombinationInput): number[] {
  return probes
    .filter(
      (p) => p.protocol === "Tcp" && (settings.ports[p.port]?.requestPath ?? settings.probe.requestPath),
    )
    .map((p) => p.port);
}

/**
 * The keys behind the first such port: its own path key or the global one, and the protocol key that made its
 * probe TCP, if one did (otherwise TCP is the behaviour table's default, which no key of the Service names).
 */
function pathAndProtocolKeys(input: AzureCombinationInput): [string, ...string[]] {
  const port = pathsOnTcpProbes(input)[0]!;
  const own = input.settings.ports[port] ?? {};
  const path = own.requestPath
    ? `${S}port_${port}_health-probe_request-path`
    : `${S}azure-load-balancer-health-probe-request-path`;
  const protocol = own.protocol
    ? `${S}port_${port}_health-probe_protocol`
    : input.settings.probe.protocol
      ? `${S}azure-load-balancer-health-probe-protocol`
      : undefined;
  return [field(path), ...(protocol ? [field(protocol)] : [])];
}

export const AZURE_COMBINATIONS: CombinationTable<AzureCombinationInput> = {
  provider: "azure",
  entries: [
    {
      fields: [field(`${S}azure-load-balancer-internal-subnet`), field(INTERNAL)],
      check: ({ intent, settings }) =>
        intent.annotations[`${S}azure-load-balancer-internal-subnet`]?.trim() && !settings.internal
          ? "a subnet is chosen for an internal frontend, but the Service is public"
          : undefined,
      fix: `set ${INTERNAL}: "true", or remove the subnet`,
      example: { annotations: { [`${S}azure-load-balancer-internal-subnet`]: "services" } },
    },
    {
      fields: [field(CONFIGURATIONS), CONFIG_FIELD],
      check: ({ intent, config }) => {
        if (!intent.annotations[CONFIGURATIONS]?.trim()) return undefined;
        if (config.loadBalancerPerService)
          return "the controller gives every Service a load balancer of its own (loadBalancerPerService), so there is none to choose";
        if (!config.multipleStandardLoadBalancerConfigurations?.length)
          return "the controller configures no load balancers to choose among, so the Service would go on the cluster's one";
        return undefined;
      },
      fix: `remove the annotation, or configure multipleStandardLoadBalancerConfigurations in the controller's Azure config`,
      example: { annotations: { [CONFIGURATIONS]: "lb-2" }, configurations: [] },
    },
    {
      fields: ["spec.loadBalancerSourceRanges", "spec.ipFamilies"],
      // The ranges may be written in Kubernetes' annotation instead.
      fieldsOf: ({ intent }) => [sourceRangesField(intent), "spec.ipFamilies"],
      check: ({ intent }) => {
        const foreign = intent.sourceRanges.filter((r) => !intent.ipFamilies.includes(FAMILY_OF(r)));
        if (!foreign.length) return undefined;
        return `${foreign.join(", ")} ${foreign.length === 1 ? "is" : "are"} ${FAMILY_OF(foreign[0]!)}, and the Service has no ${FAMILY_OF(foreign[0]!)} frontend, so no client can come from ${foreign.length === 1 ? "it" : "them"}`;
      },
      fix: `give ranges of the Service's families (${"spec.ipFamilies"}), or add that family to the Service`,
      example: { spec: { loadBalancerSourceRanges: ["2001:db8::/32"] } },
    },
    {
      fields: [
        field(`${S}azure-load-balancer-health-probe-request-path`),
        field(`${S}azure-load-balancer-health-probe-protocol`),
      ],
      check: (input) => {
        const ports = pathsOnTcpProbes(input);
        return ports.length
          ? `a request path needs an HTTP or HTTPS probe, and the probe of port ${ports.join(", ")} is TCP`
          : undefined;
      },
      fieldsOf: pathAndProtocolKeys,
      fix: `set the probe protocol to Http (${S}azure-load-balancer-health-probe-protocol, or port_<port>_health-probe_protocol), or remove the path`,
      example: {
        annotations: {
          [`${S}azure-load-balancer-health-probe-request-path`]: "/ready",
          [`${S}azure-load-balancer-health-probe-protocol`]: "Tcp",
        },
      },
    },
    {
      fields: [field(`${S}azure-pip-name`), field(INTERNAL)],
      checkedIn: "providers/azure/annotations/settings.ts",
      fix: `remove it or ${INTERNAL}`,
      reason: "InvalidAnnotation",
      example: { annotations: { [INTERNAL]: "true", [`${S}azure-pip-name`]: "my-ip" } },
    },
    {
      fields: [field(`${S}azure-dns-label-name`), field(INTERNAL)],
      checkedIn: "providers/azure/annotations/publicIp.ts (also azure-pip-ip-tags and azure-pip-prefix-id)",
      fix: `remove it, or ${INTERNAL}`,
      reason: "InvalidAnnotation",
      example: { annotations: { [INTERNAL]: "true", [`${S}azure-dns-label-name`]: "shop" } },
    },
    {
      fields: [field("portico.io/floating-ip"), field(`${S}azure-disable-load-balancer-floating-ip`)],
      checkedIn: "providers/azure/annotations/settings.ts",
      fix: "keep one of the two annotations",
      reason: "InvalidAnnotation",
      example: {
        annotations: {
          "portico.io/floating-ip": "true",
          [`${S}azure-disable-load-balancer-floating-ip`]: "true",
        },
      },
    },
    {
      fields: [field(`${S}azure-load-balancer-ipv4`), "spec.loadBalancerIP"],
      checkedIn: "providers/azure/annotations/settings.ts",
      fix: "keep one, or make them equal",
      reason: "InvalidAnnotation",
      example: {
        annotations: { [`${S}azure-load-balancer-ipv4`]: "20.0.0.1" },
        spec: { loadBalancerIP: "20.0.0.2" },
      },
    },
    {
      fields: [field(`${S}azure-allowed-ip-ranges`), "spec.loadBalancerSourceRanges"],
      checkedIn: "providers/azure/annotations/access.ts",
      fix: "list the ranges in one place only",
      reason: "InvalidAnnotation",
      example: {
        annotations: { [`${S}azure-allowed-ip-ranges`]: "203.0.113.0/24" },
        spec: { loadBalancerSourceRanges: ["198.51.100.0/24"] },
      },
    },
    {
      fields: [field(`${S}azure-disable-load-balancer-nsg-rule`), field(`${S}azure-allowed-service-tags`)],
      checkedIn: "providers/azure/annotations/access.ts (also with source ranges and deny-all)",
      fix: "remove one of the two",
      reason: "InvalidAnnotation",
      example: {
        annotations: {
          [`${S}azure-disable-load-balancer-nsg-rule`]: "true",
          [`${S}azure-allowed-service-tags`]: "AzureFrontDoor.Backend",
        },
      },
    },
    {
      fields: [
        field(`${S}azure-load-balancer-health-probe-interval`),
        field(`${S}azure-load-balancer-health-probe-num-of-probe`),
      ],
      checkedIn: "providers/azure/annotations/settings.ts",
      fix: "lower one of them",
      reason: "InvalidAnnotation",
      example: {
        annotations: {
          [`${S}azure-load-balancer-health-probe-interval`]: "60",
          [`${S}azure-load-balancer-health-probe-num-of-probe`]: "3",
        },
      },
    },
    {
      fields: ["spec.allocateLoadBalancerNodePorts", field("portico.io/target-type")],
      checkedIn:
        "providers/azure/desired/desired.ts (chooseTargetType: floating IP lets instance targets go without)",
      fix: "use ip targets (portico.io/target-type: ip), floating IP (portico.io/floating-ip) or allow node ports",
      reason: "NodePortsDisabled",
      example: {
        annotations: { "portico.io/target-type": "instance" },
        spec: { allocateLoadBalancerNodePorts: false },
      },
    },
  ],
};
