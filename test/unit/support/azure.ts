// Builders for the Azure provider's unit tests: an intent, the cluster's network and configuration, and the
// desired state and load balancers they lead to, with little ceremony.
import { ConfigurationError } from "../../../providers/errors.ts";
import type { LoadBalancerIntent } from "../../../providers/provider.ts";
import { parseAzureSettings } from "../../../providers/azure/annotations/settings.ts";
import type { AzureConfig } from "../../../providers/azure/config.ts";
import { desiredSides } from "../../../providers/azure/desired/sides.ts";
import { resourceId } from "../../../providers/azure/arm/ids.ts";
import { withService } from "../../../providers/azure/loadBalancer/loadBalancerEdit.ts";
import type {
  DesiredService,
  LoadBalancer,
  Network,
  PublicIPAddress,
} from "../../../providers/azure/model.ts";
import { frontendName } from "../../../providers/azure/names.ts";

export const SUB = "00000000-0000-0000-0000-000000000001";
export const RG = "cluster-rg";
export const CLUSTER = "prod";
export const UID = "0a1b2c3d-0000-4000-8000-00000000000a";
export const FE = frontendName(UID);
export const OTHER_UID = "0b1b2c3d-0000-4000-8000-00000000000b";

export const network: Network = {
  vnetId: resourceId(SUB, RG, "virtualNetworks", "vnet"),
  addressPrefixes: ["10.0.0.0/16"],
  subnets: {
    nodes: {
      id: `${resourceId(SUB, RG, "virtualNetworks", "vnet")}/subnets/nodes`,
      addressPrefixes: ["10.0.1.0/24"],
    },
    frontends: {
      id: `${resourceId(SUB, RG, "virtualNetworks", "vnet")}/subnets/frontends`,
      addressPrefixes: ["10.0.2.0/24"],
    },
  },
};

export function config(overrides: Partial<AzureConfig> = {}): AzureConfig {
  return {
    subscriptionId: SUB,
    resourceGroup: RG,
    location: "eastus",
    vnetName: "vnet",
    subnetName: "nodes",
    securityGroupName: "nsg",
    ...overrides,
  };
}

export function intent(
  overrides: Partial<LoadBalancerIntent> = {},
  uid = UID,
  name = "web",
): LoadBalancerIntent {
  return {
    service: { namespace: "shop", name, uid },
    loadBalancerClass: "portico.io/azure-lb",
    annotations: {},
    ports: [{ name: "http", protocol: "TCP", port: 80, nodePort: 30080 }],
    externalTrafficPolicy: "Cluster",
    allocateNodePorts: true,
    nodes: [
      { name: "node-a", internalIP: "10.0.1.10" },
      { name: "node-b", internalIP: "10.0.1.11" },
    ],
    endpoints: [],
    drainingEndpoints: [],
    sourceRanges: [],
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    serviceLabels: {},
    namespaceLabels: {},
    ...overrides,
  };
}

/** The desired state of `i`'s first (primary) family, with its public IP chosen as the provider chooses it. */
export function desired(
  i: LoadBalancerIntent = intent(),
  opts: { config?: AzureConfig; publicIps?: PublicIPAddress[]; network?: Network } = {},
): DesiredService {
  return sides(i, opts)[0]!;
}

/** Every family's side of `i`, as the provider describes them. */
export function sides(
  i: LoadBalancerIntent = intent(),
  opts: { config?: AzureConfig; publicIps?: PublicIPAddress[]; network?: Network } = {},
): DesiredService[] {
  const ctx = { cluster: CLUSTER, config: opts.config ?? config(), network: opts.network ?? network };
  return desiredSides(i, parseAzureSettings(i.annotations, i.loadBalancerIP), ctx, opts.publicIps ?? []);
}

/** A dual-stack virtual network: every subnet has an IPv6 /64 besides its IPv4 range. */
export const dualStackNetwork: Network = {
  ...network,
  addressPrefixes: ["10.0.0.0/16", "fd00:10::/48"],
  subnets: {
    nodes: { ...network.subnets.nodes!, addressPrefixes: ["10.0.1.0/24", "fd00:10:0:1::/64"] },
    frontends: { ...network.subnets.frontends!, addressPrefixes: ["10.0.2.0/24", "fd00:10:0:2::/64"] },
  },
};

/** A dual-stack Service (RequireDualStack, IPv4 first) on dual-stack nodes. */
export function dualStackIntent(overrides: Partial<LoadBalancerIntent> = {}): LoadBalancerIntent {
  return intent({
    ipFamilies: ["IPv4", "IPv6"],
    ipFamilyPolicy: "RequireDualStack",
    nodes: [
      { name: "node-a", internalIP: "10.0.1.10", internalIPv6: "fd00:10:0:1::10" },
      { name: "node-b", internalIP: "10.0.1.11", internalIPv6: "fd00:10:0:1::11" },
    ],
    ...overrides,
  });
}

/** A load balancer as ARM returns it after Portico wrote `d` into `lb`: with an id and an etag. */
export function written(d: DesiredService, lb?: LoadBalancer, etag = "e1"): LoadBalancer {
  // etag is read-only in the SDK's type: ARM sets it, as this stands in for ARM.
  return { ...withService(lb, d), id: d.loadBalancer.id, name: d.loadBalancer.name, ...{ etag } };
}

export function publicIp(name: string, extra: Partial<PublicIPAddress> = {}): PublicIPAddress {
  return {
    id: resourceId(SUB, RG, "publicIPAddresses", name),
    name,
    location: "eastus",
    sku: { name: "Standard", tier: "Regional" },
    publicIPAllocationMethod: "Static",
    ipAddress: "20.0.0.1",
    ...extra,
  };
}

/** The ConfigurationError `fn` throws; fails when it throws nothing or something else. */
export function refusal(fn: () => unknown): ConfigurationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigurationError) return err;
    throw err;
  }
  throw new Error("expected a ConfigurationError");
}
