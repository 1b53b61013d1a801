// A read-only picture of a Service's part of the cluster's load balancer(s) for `porticoctl status` and `doctor`:
// its frontend and address, each load-balancing rule with its probe, the backend pools they send to, the public
// IP, and its allow rules in the cluster's security group. Found the way the controller finds what it owns: the
// frontend named from the Service's UID, and the UID tag on Portico's public IP. Pure: reads an observation.
//
// A member's probe result comes from ARM only through a long-running operation per rule
// (loadBalancer/ruleHealth.ts, which the controller reads for readiness gates): a read-only picture does not
// start operations, so backend addresses carry no health of their own here; only what the load balancer
// states is shown (draining ones).
import type { InspectNode, ServiceRef } from "../../provider.ts";
import { nameOf, sameId } from "../arm/ids.ts";
import type { LoadBalancer, NetworkSecurityGroup, Observed, PublicIPAddress } from "../model.ts";
import { belongsTo, frontendName, TAG } from "../names.ts";
import { isPorticoRule } from "../security/rulesEdit.ts";
import { configurationOf, type LoadBalancerConfiguration } from "../placement/lbConfigurations.ts";

type Frontend = NonNullable<LoadBalancer["frontendIPConfigurations"]>[number];
type Rule = NonNullable<LoadBalancer["loadBalancingRules"]>[number];
type Pool = NonNullable<LoadBalancer["backendAddressPools"]>[number];
type SecurityRule = NonNullable<NetworkSecurityGroup["securityRules"]>[number];

/**
 * With several configured load balancers (multipleStandardLoadBalancerConfigurations), each load balancer's line
 * names the configuration it belongs to, so the user sees which one holds the Service.
 */
export function inspectService(
  observed: Observed,
  service: ServiceRef,
  configurations: readonly LoadBalancerConfiguration[] = [],
): InspectNode[] {
  // A dual-stack Service has a frontend per family (names.ts); each is shown with its own rules and pools.
  const frontends = [frontendName(service.uid), frontendName(service.uid, "IPv6")];
  const nodes: InspectNode[] = [];
  const usedIps = new Set<string>();
  const found = new Set<string>();
  for (const lb of observed.loadBalancers)
    for (const fe of frontends) {
      // A Service sharing another's public IP uses that Service's frontend: found through its own rules.
      const shared = lb.loadBalancingRules?.find((r) => belongsTo(r.name, fe))?.frontendIPConfiguration?.id;
      const frontend =
        lb.frontendIPConfigurations?.find((f) => f.name === fe) ??
        lb.frontendIPConfigurations?.find((f) => f.name === nameOf(shared));
      if (!frontend) continue;
      found.add(fe);
      if (frontend.publicIPAddress?.id) usedIps.add(frontend.publicIPAddress.id.toLowerCase());
      const node = loadBalancerNode(lb, frontend, observed.publicIps, service.uid, fe);
      const placed = configurations.length ? configurationOf(configurations, lb.name) : undefined;
      if (configurations.length)
        node.label += placed
          ? `, configuration ${placed.name} of ${configurations.length} (multipleStandardLoadBalancerConfigurations)`
          : ", in no configuration of multipleStandardLoadBalancerConfigurations: the Service moves at its next reconcile";
      nodes.push(node);
    }
  // Portico's public IP outlives a half-finished change or removal: show it even when no frontend uses it.
  for (const pip of observed.publicIps) {
    if (pip.tags?.[TAG.serviceUid] !== service.uid || usedIps.has(pip.id?.toLowerCase() ?? "")) continue;
    nodes.push({
      label: `public IP ${pip.name} ${pip.ipAddress ?? "<no address>"} is Portico's for this Service but no frontend uses it`,
      health: "warn",
    });
  }
  if (!nodes.length)
    return [
      {
        label: `no Azure load balancer has frontend ${frontends[0]} and no public IP is tagged for this Service`,
        health: "warn",
      },
    ];
  const nsg = observed.securityGroup;
  if (nsg)
    for (const fe of found.size ? frontends.filter((f) => found.has(f)) : [frontends[0]!])
      nodes.push(securityGroupNode(nsg, fe));
  return nodes;
}

function loadBalancerNode(
  lb: LoadBalancer,
  frontend: Frontend,
  publicIps: PublicIPAddress[],
  uid: string,
  fe: string,
): InspectNode {
  // Frontend names are unique within a load balancer, and a rule can only name one of its own; a shared
  // frontend also carries other Services' rules, which are theirs to show.
  const rules = (lb.loadBalancingRules ?? [])
    .filter((r) => nameOf(r.frontendIPConfiguration?.id) === frontend.name && belongsTo(r.name, fe))
    .sort(
      (a, b) => (a.frontendPort ?? 0) - (b.frontendPort ?? 0) || (a.name ?? "").localeCompare(b.name ?? ""),
    );
  const poolNames = [...new Set(rules.map(poolOf).filter((p): p is string => p !== undefined))];
  const children: InspectNode[] = [
    frontendNode(frontend, publicIps, uid),
    ...(rules.length
      ? rules.map((r) => ruleNode(r, lb))
      : [{ label: "no load-balancing rules for this frontend", health: "warn" as const }]),
    ...poolNames.map((name) =>
      poolNode(
        name,
        lb.backendAddressPools?.find((p) => p.name === name),
      ),
    ),
  ];
  const state = lb.provisioningState;
  return {
    label: `load balancer ${lb.name} (${frontend.subnet?.id ? "internal" : "public"}, ${lb.sku?.name ?? "Basic"})${state ? ` ${state}` : ""}`,
    ...(state ? { health: state === "Succeeded" ? "ok" : "warn" } : {}),
    children,
  };
}

function frontendNode(frontend: Frontend, publicIps: PublicIPAddress[], uid: string): InspectNode {
  if (frontend.subnet?.id) {
    const address = frontend.privateIPAddress;
    return {
      label: `frontend ${frontend.name} ${address ?? "<no address yet>"} in subnet ${nameOf(frontend.subnet.id)} (${frontend.privateIPAllocationMethod ?? "Dynamic"})`,
      ...(address ? {} : { health: "warn" }),
    };
  }
  const id = frontend.publicIPAddress?.id;
  const pip = publicIps.find((p) => sameId(p.id, id));
  if (!pip)
    return {
      label: `frontend ${frontend.name} uses public IP ${nameOf(id) ?? "<none>"}, which was not found`,
      health: "warn",
    };
  const whose =
    pip.tags?.[TAG.serviceUid] === uid
      ? "Portico's, tagged for this Service"
      : pip.tags?.[TAG.serviceUid]
        ? `Portico's for Service ${pip.tags[TAG.service] ?? pip.tags[TAG.serviceUid]}, shared with this one`
        : "the user's own; Portico only uses it";
  return {
    label: `frontend ${frontend.name} ${pip.ipAddress ?? "<no address yet>"}`,
    ...(pip.ipAddress ? {} : { health: "warn" }),
    children: [
      { label: `public IP ${pip.name} (${whose}, ${pip.publicIPAllocationMethod ?? "Static"})` },
      // The Service's status holds the address only, as cloud-provider-azure writes it; the name is shown here.
      ...(pip.dnsSettings?.fqdn ? [{ label: `DNS name ${pip.dnsSettings.fqdn}` }] : []),
      ...(pip.ipTags?.length
        ? [{ label: `IP tags ${pip.ipTags.map((t) => `${t.ipTagType}=${t.tag}`).join(", ")}` }]
        : []),
    ],
  };
}

function ruleNode(rule: Rule, lb: LoadBalancer): InspectNode {
  const protocol = (rule.protocol ?? "").toUpperCase();
  const label =
    `rule ${protocol} ${rule.frontendPort} → ${rule.backendPort}, floating IP ${rule.enableFloatingIP ? "on" : "off"}, ` +
    `distribution ${rule.loadDistribution ?? "Default"}`;
  const probe = rule.probe?.id
    ? lb.probes?.find((p) => sameId(p.id, rule.probe!.id) || p.name === nameOf(rule.probe!.id))
    : undefined;
  if (!probe)
    return {
      label,
      children: [
        {
          label: rule.probe?.id
            ? `probe ${nameOf(rule.probe.id)} not found on the load balancer`
            : "no probe: every backend receives traffic, whether it serves or not",
          health: "warn",
        },
      ],
    };
  return { label, children: [{ label: `probe ${probeText(probe)}` }] };
}

/** `Tcp:31080` or `Http:10256/healthz`, as the probe asks. */
export function probeText(probe: { protocol?: string; port?: number; requestPath?: string }): string {
  return `${probe.protocol ?? "Tcp"}:${probe.port}${probe.protocol !== "Tcp" && probe.requestPath ? probe.requestPath : ""}`;
}

function poolNode(name: string, pool: Pool | undefined): InspectNode {
  if (!pool) return { label: `backend pool ${name} not found on the load balancer`, health: "bad" };
  const addresses = [...(pool.loadBalancerBackendAddresses ?? [])].sort((a, b) =>
    (a.ipAddress ?? "").localeCompare(b.ipAddress ?? "", undefined, { numeric: true }),
  );
  if (!addresses.length)
    return { label: `backend pool ${name}: no addresses, so no backend receives traffic`, health: "warn" };
  return {
    label: `backend pool ${name}: ${addresses.length} address${addresses.length === 1 ? "" : "es"}`,
    children: addresses.map((a) => {
      // Labels start with "address" so `doctor` does not count them as targets with a health of their own.
      const named = a.name && a.name !== a.ipAddress ? ` (${a.name})` : "";
      return a.adminState === "Down"
        ? { label: `address ${a.ipAddress}${named} draining (adminState Down)`, health: "warn" as const }
        : { label: `address ${a.ipAddress}${named}` };
    }),
  };
}

function securityGroupNode(nsg: NetworkSecurityGroup, fe: string): InspectNode {
  const rules = (nsg.securityRules ?? [])
    .filter((r) => isPorticoRule(r, fe))
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0));
  if (!rules.length)
    return { label: `security group ${nsg.name}: no allow rules for this Service`, health: "warn" };
  return { label: `security group ${nsg.name}`, children: rules.map((r) => ({ label: allowRuleText(r) })) };
}

/** `allow TCP Internet → 10.0.1.0/24:31080 (priority 500)`. */
export function allowRuleText(rule: SecurityRule): string {
  const sources = prefixes(rule.sourceAddressPrefix, rule.sourceAddressPrefixes);
  const destinations = prefixes(rule.destinationAddressPrefix, rule.destinationAddressPrefixes);
  const ports = prefixes(rule.destinationPortRange, rule.destinationPortRanges).join(",");
  return (
    `${(rule.access ?? "Allow").toLowerCase()} ${(rule.protocol ?? "*").toUpperCase()} ${sources.join(", ")} → ` +
    `${destinations.map((d) => `${d}:${ports}`).join(", ")}${rule.priority !== undefined ? ` (priority ${rule.priority})` : ""}`
  );
}

function prefixes(one: string | undefined, many: string[] | undefined): string[] {
  return many?.length ? many : one ? [one] : ["*"];
}

function poolOf(rule: Rule): string | undefined {
  return nameOf(rule.backendAddressPool?.id ?? rule.backendAddressPools?.[0]?.id);
}
