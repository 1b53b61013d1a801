// Every Azure refusal names a field the refused Service has, or the controller's setting that decided: a message
// naming an annotation the Service does not carry sends its reader looking for what is not there. Each case is a
// Service refused through the provider's own pure path (settings, sides, placement and limits), built so that the
// field an earlier message named was one the Service lacked.
import { describe, expect, it } from "vitest";
import type { LoadBalancerIntent } from "../../provider.ts";
import { parseAzureSettings } from "../annotations/settings.ts";
import type { AzureConfig } from "../config.ts";
import type { LoadBalancer, NetworkSecurityGroup, Observed, PublicIPAddress } from "../model.ts";
import { frontendName, MAX_TAGS, TAG } from "../names.ts";
import { recordTag } from "../loadBalancer/loadBalancerEdit.ts";
import { placedSides } from "./placeSides.ts";
import {
  CLUSTER,
  config,
  dualStackIntent,
  dualStackNetwork,
  intent,
  network,
  OTHER_UID,
  publicIp,
  refusal,
  written,
} from "../../../test/unit/support/azure.ts";

const A = "service.beta.kubernetes.io/";
const SOURCE_RANGES = `${A}load-balancer-source-ranges`;
const CONFIG = "(controller Azure config)";

/**
 * Whether the Service behind `i` has `field`: an annotation it carries, a spec field it sets (the apiserver
 * gives every LoadBalancer Service spec.allocateLoadBalancerNodePorts), or the controller's configuration.
 */
function has(field: string, i: LoadBalancerIntent): boolean {
  const annotation = /^metadata\.annotations\[(.+)\]$/.exec(field)?.[1];
  if (annotation !== undefined) return Boolean(i.annotations[annotation]?.trim());
  if (field.endsWith(CONFIG)) return true;
  if (field === "spec.ports" || field.startsWith("spec.ports[")) return i.ports.length > 0;
  if (field === "spec.loadBalancerSourceRanges")
    return i.sourceRanges.length > 0 && !i.annotations[SOURCE_RANGES];
  if (field === "spec.loadBalancerIP") return Boolean(i.loadBalancerIP);
  if (field === "metadata.labels") return Object.keys(i.serviceLabels).length > 0;
  return ["spec.allocateLoadBalancerNodePorts", "spec.ipFamilies", "metadata.uid"].includes(field);
}

const none: Observed = { loadBalancers: [], publicIps: [] };

function place(i: LoadBalancerIntent, cfg: AzureConfig, observed: Observed, net = network) {
  const settings = parseAzureSettings(i.annotations, i.loadBalancerIP);
  return placedSides(i, settings, { cluster: CLUSTER, config: cfg, network: net }, observed);
}

/** ARM after `count` other Services (ports 81, 82, ...) were placed and written under `cfg`. */
function others(count: number, cfg: AzureConfig): Observed {
  let observed = none;
  for (let n = 1; n <= count; n++) {
    const other = intent(
      { ports: [{ name: "p", protocol: "TCP", port: 80 + n, nodePort: 30080 + n }] },
      `0d0d0d0d-0000-4000-8000-${String(n).padStart(12, "0")}`,
      `other-${n}`,
    );
    for (const d of place(other, config({ ...cfg, limits: {} }), observed)) {
      const before = observed.loadBalancers.find((l) => l.name === d.loadBalancer.name);
      observed = {
        ...observed,
        loadBalancers: [...observed.loadBalancers.filter((l) => l !== before), written(d, before)],
      };
    }
  }
  return observed;
}

/** A shared load balancer already recording as many Services in its tags as ARM allows. */
function fullLoadBalancer(name: string): LoadBalancer {
  const tags: Record<string, string> = { [TAG.cluster]: CLUSTER, [TAG.resource]: "loadbalancer" };
  for (let n = 0; Object.keys(tags).length < MAX_TAGS; n++)
    tags[recordTag(frontendName(`0c0c0c0c-0000-4000-8000-${String(n).padStart(12, "0")}`))] = `shop/s${n}`;
  return { name, id: `/lb/${name}`, location: "eastus", sku: { name: "Standard" }, tags };
}

/** A security group whose rules already name one source address and one destination address. */
const oneAddressEach: NetworkSecurityGroup = {
  name: "nsg",
  securityRules: [
    {
      name: "user",
      priority: 100,
      access: "Allow",
      direction: "Inbound",
      protocol: "Tcp",
      sourceAddressPrefix: "198.51.100.0/24",
      destinationAddressPrefix: "10.0.1.5",
      sourcePortRange: "*",
      destinationPortRange: "22",
    },
  ],
};

/** Another Service's public IP of this cluster, which a Service asking for its address shares. */
const othersIp: PublicIPAddress = publicIp("others", {
  ipAddress: "20.0.0.9",
  tags: { [TAG.cluster]: CLUSTER, [TAG.serviceUid]: OTHER_UID, [TAG.service]: "shop/other" },
});

interface Case {
  intent: LoadBalancerIntent;
  config?: AzureConfig;
  observed?: Observed;
  dualStack?: boolean;
  reason: string;
  field: string;
}

const several = (extra: Partial<AzureConfig> = {}) =>
  config({
    multipleStandardLoadBalancerConfigurations: [
      { name: CLUSTER, primaryVMSet: "pool-a" },
      { name: "lb-b", primaryVMSet: "pool-b" },
    ],
    ...extra,
  });

const CASES: Record<string, Case> = {
  "a full load balancer, for a public Service on the user's public IP named by azure-pip-name": {
    intent: intent({ annotations: { [`${A}azure-pip-name`]: "mine" } }),
    observed: { loadBalancers: [fullLoadBalancer(CLUSTER)], publicIps: [publicIp("mine")] },
    reason: "LoadBalancerFull",
    field: `metadata.annotations[${A}azure-pip-name]`,
  },
  "a full load balancer, for a public Service on a user's public IP found by spec.loadBalancerIP": {
    intent: intent({ loadBalancerIP: "20.0.0.1" }),
    observed: { loadBalancers: [fullLoadBalancer(CLUSTER)], publicIps: [publicIp("mine")] },
    reason: "LoadBalancerFull",
    field: "spec.loadBalancerIP",
  },
  "a full load balancer, for a public Service sharing another's address by azure-load-balancer-ipv4": {
    intent: intent({ annotations: { [`${A}azure-load-balancer-ipv4`]: "20.0.0.9" } }),
    observed: { loadBalancers: [fullLoadBalancer(CLUSTER)], publicIps: [othersIp] },
    reason: "LoadBalancerFull",
    field: `metadata.annotations[${A}azure-load-balancer-ipv4]`,
  },
  "a full load balancer, for the IPv6 side on the user's public IP named by azure-pip-name-ipv6": {
    intent: dualStackIntent({ annotations: { [`${A}azure-pip-name-ipv6`]: "my-v6" } }),
    dualStack: true,
    observed: {
      loadBalancers: [fullLoadBalancer(CLUSTER)],
      publicIps: [publicIp("my-v6", { publicIPAddressVersion: "IPv6", ipAddress: "2001:db8::7" })],
    },
    reason: "LoadBalancerFull",
    field: `metadata.annotations[${A}azure-pip-name-ipv6]`,
  },
  "a full internal load balancer": {
    intent: intent({ annotations: { [`${A}azure-load-balancer-internal`]: "true" } }),
    observed: { loadBalancers: [fullLoadBalancer(`${CLUSTER}-internal`)], publicIps: [] },
    reason: "LoadBalancerFull",
    field: `metadata.annotations[${A}azure-load-balancer-internal]`,
  },
  "too many rules per node, with instance targets by default": {
    intent: intent(),
    config: config({ limits: { rulesPerBackendAddress: 1 } }),
    observed: others(1, config()),
    reason: "TooManyRulesPerBackend",
    field: "spec.ports",
  },
  "too many destination addresses, with floating IP off by default": {
    intent: intent(),
    config: config({ limits: { addressPrefixesPerSecurityGroup: 1 } }),
    observed: { ...none, securityGroup: oneAddressEach },
    reason: "TooManySecurityRuleAddresses",
    field: "spec.ports",
  },
  "too many source addresses, listed in azure-allowed-ip-ranges": {
    intent: intent({ annotations: { [`${A}azure-allowed-ip-ranges`]: "203.0.113.0/24" } }),
    config: config({ limits: { addressPrefixesPerSecurityGroup: 1 } }),
    observed: { ...none, securityGroup: oneAddressEach },
    reason: "TooManySecurityRuleAddresses",
    field: `metadata.annotations[${A}azure-allowed-ip-ranges]`,
  },
  "too many source addresses, listed in Kubernetes' source-ranges annotation": {
    intent: intent({ sourceRanges: ["203.0.113.0/24"], annotations: { [SOURCE_RANGES]: "203.0.113.0/24" } }),
    config: config({ limits: { addressPrefixesPerSecurityGroup: 1 } }),
    observed: { ...none, securityGroup: oneAddressEach },
    reason: "TooManySecurityRuleAddresses",
    field: `metadata.annotations[${SOURCE_RANGES}]`,
  },
  "source ranges in Kubernetes' annotation, without a security group to enforce them": {
    intent: intent({ sourceRanges: ["203.0.113.0/24"], annotations: { [SOURCE_RANGES]: "203.0.113.0/24" } }),
    config: config({ securityGroupName: undefined }),
    reason: "SourceRangesUnsupported",
    field: `metadata.annotations[${SOURCE_RANGES}]`,
  },
  "pods outside the virtual network, as targets by default without node ports": {
    intent: intent({
      allocateNodePorts: false,
      ports: [{ name: "http", protocol: "TCP", port: 80 }],
      endpoints: [{ ip: "192.168.7.7", nodeName: "node-a", ports: { http: 8080 } }],
    }),
    reason: "PodsOutsideVirtualNetwork",
    field: "spec.allocateLoadBalancerNodePorts",
  },
  "floating IP to pods, turned on by azure-disable-load-balancer-floating-ip": {
    intent: intent({
      annotations: {
        "portico.io/target-type": "ip",
        [`${A}azure-disable-load-balancer-floating-ip`]: "false",
      },
    }),
    reason: "FloatingIPNeedsNodes",
    field: `metadata.annotations[${A}azure-disable-load-balancer-floating-ip]`,
  },
  "no configured load balancer open to a Service that names none": {
    intent: intent(),
    config: config({
      multipleStandardLoadBalancerConfigurations: [
        { name: CLUSTER, primaryVMSet: "pool-a", allowServicePlacement: false },
      ],
    }),
    reason: "NoEligibleLoadBalancer",
    field: `multipleStandardLoadBalancerConfigurations ${CONFIG}`,
  },
  "no configured load balancer with room, for a Service that names none": {
    intent: intent(),
    config: several({ limits: { frontendIPConfigurationsPerLoadBalancer: 1 } }),
    observed: others(2, several()),
    reason: "NoLoadBalancerWithRoom",
    field: `multipleStandardLoadBalancerConfigurations ${CONFIG}`,
  },
  "too many frontends on the one shared load balancer": {
    intent: intent(),
    config: config({ limits: { frontendIPConfigurationsPerLoadBalancer: 1 } }),
    observed: others(1, config()),
    reason: "TooManyFrontends",
    field: `loadBalancerPerService ${CONFIG}`,
  },
  "a per-port request path on a port whose probe is TCP by default": {
    intent: intent({ annotations: { [`${A}port_80_health-probe_request-path`]: "/ready" } }),
    reason: "ConflictingSettings",
    field: `metadata.annotations[${A}port_80_health-probe_request-path]`,
  },
  "IPv6 source ranges in Kubernetes' annotation, on an IPv4 Service": {
    intent: intent({ sourceRanges: ["2001:db8::/32"], annotations: { [SOURCE_RANGES]: "2001:db8::/32" } }),
    reason: "ConflictingSettings",
    field: `metadata.annotations[${SOURCE_RANGES}]`,
  },
  "a per-port annotation for a port the Service does not have": {
    intent: intent({ annotations: { [`${A}port_8443_health-probe_protocol`]: "Http" } }),
    reason: "InvalidAnnotation",
    field: `metadata.annotations[${A}port_8443_health-probe_protocol]`,
  },
};

describe("every Azure refusal names a field the Service has, or the controller's setting", () => {
  it.each(Object.entries(CASES))("%s", (_, c) => {
    const err = refusal(() =>
      place(c.intent, c.config ?? config(), c.observed ?? none, c.dualStack ? dualStackNetwork : network),
    );
    expect(err.reason).toBe(c.reason);
    expect(err.field).toBe(c.field);
    expect(has(err.field, c.intent), `${err.field} is not a field of the Service: ${err.message}`).toBe(true);
    // Nor does what the message says beside it (the fix may suggest annotations to add).
    const said = err.message.slice(0, err.fix ? -err.fix.length : undefined);
    for (const [named] of said.matchAll(/metadata\.annotations\[[^\]]+\]/g))
      expect(has(named, c.intent), `${named} is not a field of the Service: ${err.message}`).toBe(true);
  });
});
