// Microsoft.Network/loadBalancers: reading the body (with NRP's defaults), rendering it back with the computed
// back-references, and the backendAddressPools child that can be written on its own.
import type { BodyObject, Json } from "../body.ts";
import { assertValidName, childId } from "../ids.ts";
import type { ChildKind, Context, ResourceKind } from "../kinds.ts";
import { compact, ref, renderChild, renderEnvelope } from "../kinds.ts";
import type {
  BackendAddressPool,
  FrontendIpConfiguration,
  LoadBalancer,
  LoadBalancerProperties,
  LoadBalancingRule,
  OutboundRule,
  Probe,
  Sku,
} from "../model.ts";
import { missingRequiredProperty, unsupportedByEmulator } from "../networkErrors.ts";
import { ruleReferences } from "../references.ts";
import { admitLoadBalancer } from "./loadBalancerValidation.ts";
import { reconcilePublicAddresses } from "./publicIpAddresses.ts";

const PROTOCOLS = ["Tcp", "Udp", "All"] as const;

function childName(b: BodyObject, fallback?: string): string {
  const name = fallback ?? b.string("name");
  if (!name) throw missingRequiredProperty("name", b.path || "the request body");
  assertValidName(name);
  return name;
}

function parseFrontend(b: BodyObject): FrontendIpConfiguration {
  const p = b.properties();
  const f: FrontendIpConfiguration = {
    name: childName(b),
    privateIPAllocationMethod:
      p.enumValue("privateIPAllocationMethod", ["Static", "Dynamic"], "IPAllocationMethod") ?? "Dynamic",
    privateIPAddressVersion: p.enumValue("privateIPAddressVersion", ["IPv4", "IPv6"], "IPVersion") ?? "IPv4",
  };
  const pip = p.reference("publicIPAddress");
  const subnet = p.reference("subnet");
  const address = p.string("privateIPAddress");
  if (pip) f.publicIPAddressId = pip;
  if (subnet) f.subnetId = subnet;
  if (address) f.privateIPAddress = address;
  if (p.has("publicIPPrefix")) throw unsupportedByEmulator("A frontend with a public IP prefix");
  if (p.has("gatewayLoadBalancer")) throw unsupportedByEmulator("Chaining a gateway load balancer");
  const zones = b.strings("zones");
  if (zones) f.zones = zones;
  return f;
}

export function parsePool(b: BodyObject, name?: string): BackendAddressPool {
  const p = b.properties();
  const pool: BackendAddressPool = {
    name: childName(b, name),
    loadBalancerBackendAddresses: (p.array("loadBalancerBackendAddresses") ?? []).map((a, i) => {
      const ap = a.properties();
      return compact({
        name: a.string("name") ?? `address${i}`,
        ipAddress: ap.string("ipAddress"),
        virtualNetworkId: ap.reference("virtualNetwork"),
        subnetId: ap.reference("subnet"),
        adminState: ap.enumValue(
          "adminState",
          ["None", "Up", "Down"],
          "LoadBalancerBackendAddressAdminState",
        ),
      }) as unknown as BackendAddressPool["loadBalancerBackendAddresses"][number];
    }),
  };
  const vnet = p.reference("virtualNetwork");
  if (vnet) pool.virtualNetworkId = vnet;
  const drain = p.integer("drainPeriodInSeconds");
  if (drain !== undefined) pool.drainPeriodInSeconds = drain;
  if (p.has("tunnelInterfaces")) throw unsupportedByEmulator("Gateway load balancer tunnel interfaces");
  return pool;
}

function parseRule(b: BodyObject): LoadBalancingRule {
  const p = b.properties();
  const pools = p.references("backendAddressPools") ?? [];
  return compact({
    name: childName(b),
    frontendIPConfigurationId: p.reference("frontendIPConfiguration"),
    backendAddressPoolId: p.reference("backendAddressPool") ?? pools[0],
    probeId: p.reference("probe"),
    protocol: p.enumValue("protocol", PROTOCOLS, "TransportProtocol"),
    frontendPort: p.integer("frontendPort"),
    backendPort: p.integer("backendPort"),
    idleTimeoutInMinutes: p.integer("idleTimeoutInMinutes") ?? 4,
    enableFloatingIP: p.boolean("enableFloatingIP") ?? false,
    enableTcpReset: p.boolean("enableTcpReset") ?? false,
    disableOutboundSnat: p.boolean("disableOutboundSnat") ?? false,
    loadDistribution:
      p.enumValue("loadDistribution", ["Default", "SourceIP", "SourceIPProtocol"], "LoadDistribution") ??
      "Default",
  }) as unknown as LoadBalancingRule;
}

function parseProbe(b: BodyObject): Probe {
  const p = b.properties();
  return compact({
    name: childName(b),
    protocol: p.enumValue("protocol", ["Tcp", "Http", "Https"], "ProbeProtocol"),
    port: p.integer("port"),
    intervalInSeconds: p.integer("intervalInSeconds") ?? 15,
    numberOfProbes: p.integer("numberOfProbes") ?? 2,
    probeThreshold: p.integer("probeThreshold") ?? 1,
    requestPath: p.string("requestPath"),
  }) as unknown as Probe;
}

function parseOutboundRule(b: BodyObject): OutboundRule {
  const p = b.properties();
  return compact({
    name: childName(b),
    frontendIPConfigurationIds: p.references("frontendIPConfigurations") ?? [],
    backendAddressPoolId: p.reference("backendAddressPool"),
    protocol: p.enumValue("protocol", PROTOCOLS, "LoadBalancerOutboundRuleProtocol"),
    allocatedOutboundPorts: p.integer("allocatedOutboundPorts") ?? 0,
    idleTimeoutInMinutes: p.integer("idleTimeoutInMinutes") ?? 4,
    enableTcpReset: p.boolean("enableTcpReset") ?? false,
  }) as unknown as OutboundRule;
}

function parse(body: BodyObject): { properties: LoadBalancerProperties; sku: Sku } {
  const skuBody = body.object("sku");
  // The API's default SKU for a load balancer is Basic.
  const sku: Sku = {
    name: skuBody?.enumValue("name", ["Basic", "Standard", "Gateway"], "LoadBalancerSkuName") ?? "Basic",
    tier: skuBody?.enumValue("tier", ["Regional", "Global"], "LoadBalancerSkuTier") ?? "Regional",
  };
  if (sku.name === "Gateway") throw unsupportedByEmulator("The Gateway load balancer SKU");
  if (sku.tier === "Global") throw unsupportedByEmulator("The Global (cross-region) load balancer tier");
  const p = body.properties();
  if (p.array("inboundNatRules")?.length || p.array("inboundNatPools")?.length)
    throw unsupportedByEmulator("Inbound NAT rules and pools");
  return {
    sku,
    properties: {
      frontendIPConfigurations: (p.array("frontendIPConfigurations") ?? []).map(parseFrontend),
      backendAddressPools: (p.array("backendAddressPools") ?? []).map((b) => parsePool(b)),
      loadBalancingRules: (p.array("loadBalancingRules") ?? []).map(parseRule),
      probes: (p.array("probes") ?? []).map(parseProbe),
      outboundRules: (p.array("outboundRules") ?? []).map(parseOutboundRule),
    },
  };
}

const refs = (list: { id: string }[]): { id: string }[] | undefined => (list.length ? list : undefined);

function render(lb: LoadBalancer, _ctx: Context): Json {
  const p = lb.properties;
  const id = (segment: string, name: string): string => childId(lb.id, segment, name);
  const using = ruleReferences(lb);
  const frontends = p.frontendIPConfigurations.map((f) => {
    const fid = id("frontendIPConfigurations", f.name);
    const out = renderChild(
      lb,
      "frontendIPConfigurations",
      f.name,
      compact({
        privateIPAddress: f.subnetId ? f.privateIPAddress : undefined,
        privateIPAllocationMethod: f.privateIPAllocationMethod,
        privateIPAddressVersion: f.subnetId ? f.privateIPAddressVersion : undefined,
        subnet: ref(f.subnetId),
        publicIPAddress: ref(f.publicIPAddressId),
        loadBalancingRules: refs(using.loadBalancing("frontendIPConfigurationId", fid)),
        outboundRules: refs(using.outbound("frontend", fid)),
      }),
    );
    if (f.zones?.length) out.zones = f.zones;
    return out;
  });
  const pools = p.backendAddressPools.map((pool) => {
    const pid = id("backendAddressPools", pool.name);
    return renderChild(
      lb,
      "backendAddressPools",
      pool.name,
      compact({
        virtualNetwork: ref(pool.virtualNetworkId),
        drainPeriodInSeconds: pool.drainPeriodInSeconds,
        loadBalancerBackendAddresses: pool.loadBalancerBackendAddresses.map((a) => ({
          name: a.name,
          properties: compact({
            ipAddress: a.ipAddress,
            virtualNetwork: ref(a.virtualNetworkId),
            subnet: ref(a.subnetId),
            adminState: a.adminState,
          }),
        })),
        loadBalancingRules: refs(using.loadBalancing("backendAddressPoolId", pid)),
        outboundRules: refs(using.outbound("pool", pid)),
      }),
    );
  });
  const rules = p.loadBalancingRules.map((r) =>
    renderChild(
      lb,
      "loadBalancingRules",
      r.name,
      compact({
        frontendIPConfiguration: ref(r.frontendIPConfigurationId),
        backendAddressPool: ref(r.backendAddressPoolId),
        backendAddressPools: r.backendAddressPoolId ? [{ id: r.backendAddressPoolId }] : undefined,
        probe: ref(r.probeId),
        protocol: r.protocol,
        loadDistribution: r.loadDistribution,
        frontendPort: r.frontendPort,
        backendPort: r.backendPort,
        idleTimeoutInMinutes: r.idleTimeoutInMinutes,
        enableFloatingIP: r.enableFloatingIP,
        enableTcpReset: r.enableTcpReset,
        disableOutboundSnat: r.disableOutboundSnat,
      }),
    ),
  );
  const probes = p.probes.map((pr) =>
    renderChild(
      lb,
      "probes",
      pr.name,
      compact({
        protocol: pr.protocol,
        port: pr.port,
        requestPath: pr.requestPath,
        intervalInSeconds: pr.intervalInSeconds,
        numberOfProbes: pr.numberOfProbes,
        probeThreshold: pr.probeThreshold,
        loadBalancingRules: refs(using.loadBalancing("probeId", id("probes", pr.name))),
      }),
    ),
  );
  const outbound = p.outboundRules.map((o) =>
    renderChild(
      lb,
      "outboundRules",
      o.name,
      compact({
        frontendIPConfigurations: o.frontendIPConfigurationIds.map((x) => ({ id: x })),
        backendAddressPool: ref(o.backendAddressPoolId),
        protocol: o.protocol,
        allocatedOutboundPorts: o.allocatedOutboundPorts,
        idleTimeoutInMinutes: o.idleTimeoutInMinutes,
        enableTcpReset: o.enableTcpReset,
      }),
    ),
  );
  return renderEnvelope(lb, {
    frontendIPConfigurations: frontends,
    backendAddressPools: pools,
    loadBalancingRules: rules,
    probes,
    inboundNatRules: [],
    inboundNatPools: [],
    outboundRules: outbound,
  });
}

const backendAddressPools: ChildKind<LoadBalancer> = {
  segment: "backendAddressPools",
  upsert(parent, name, body) {
    const pool = parsePool(body, name);
    const current = parent.properties.backendAddressPools;
    const exists = current.some((p) => p.name.toLowerCase() === name.toLowerCase());
    const pools = exists
      ? current.map((p) => (p.name.toLowerCase() === name.toLowerCase() ? pool : p))
      : [...current, pool];
    return { ...parent.properties, backendAddressPools: pools };
  },
  remove(parent, name) {
    const pools = parent.properties.backendAddressPools.filter(
      (p) => p.name.toLowerCase() !== name.toLowerCase(),
    );
    return { ...parent.properties, backendAddressPools: pools };
  },
};

export const loadBalancers: ResourceKind<LoadBalancer> = {
  type: "loadBalancers",
  operationNoun: "LoadBalancer",
  parse,
  admit: admitLoadBalancer,
  render,
  onProvisioned: (_lb, ctx) => reconcilePublicAddresses(ctx),
  onDeleted: (_lb, ctx) => reconcilePublicAddresses(ctx),
  children: {
    frontendipconfigurations: { segment: "frontendIPConfigurations" },
    backendaddresspools: backendAddressPools,
    loadbalancingrules: { segment: "loadBalancingRules" },
    probes: { segment: "probes" },
    outboundrules: { segment: "outboundRules" },
    inboundnatrules: { segment: "inboundNatRules" },
  },
};
