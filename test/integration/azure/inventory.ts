// Reads back everything in the Azure emulator with the real client, so tests assert on ARM itself, not on
// Portico's memory.
import type { TestAzure } from "../../harness/index.ts";

const last = (id: string | undefined) => id?.split("/").pop();

export async function inventory(azure: TestAzure) {
  const rg = azure.resourceGroup;
  const loadBalancers = [];
  for await (const lb of azure.network.loadBalancers.list(rg)) {
    loadBalancers.push({
      name: lb.name!,
      sku: lb.sku?.name,
      tags: lb.tags ?? {},
      frontends: (lb.frontendIPConfigurations ?? []).map((f) => ({
        name: f.name!,
        publicIp: last(f.publicIPAddress?.id),
        subnet: last(f.subnet?.id),
        privateIp: f.privateIPAddress,
        allocation: f.privateIPAllocationMethod,
      })),
      pools: (lb.backendAddressPools ?? []).map((p) => ({
        name: p.name!,
        addresses: (p.loadBalancerBackendAddresses ?? [])
          .map((a) => `${a.ipAddress}${a.adminState === "Down" ? " (draining)" : ""}`)
          .sort(),
      })),
      probes: (lb.probes ?? []).map((p) => ({
        name: p.name!,
        protocol: p.protocol,
        port: p.port,
        ...(p.requestPath ? { path: p.requestPath } : {}),
      })),
      rules: (lb.loadBalancingRules ?? []).map((r) => ({
        name: r.name!,
        protocol: r.protocol,
        frontendPort: r.frontendPort,
        backendPort: r.backendPort,
        frontend: last(r.frontendIPConfiguration?.id),
        pool: last(r.backendAddressPool?.id),
        probe: last(r.probe?.id),
        floatingIP: r.enableFloatingIP ?? false,
      })),
    });
  }
  const publicIps = [];
  for await (const p of azure.network.publicIPAddresses.list(rg))
    publicIps.push({
      name: p.name!,
      address: p.ipAddress,
      tags: p.tags ?? {},
      usedBy: last(p.ipConfiguration?.id),
    });
  const nsg = await azure.network.networkSecurityGroups.get(rg, "cluster-nsg");
  const securityRules = (nsg.securityRules ?? []).map((r) => ({
    name: r.name!,
    description: r.description,
    protocol: r.protocol,
    priority: r.priority!,
    port: r.destinationPortRange,
    sources: r.sourceAddressPrefixes?.length ? [...r.sourceAddressPrefixes].sort() : [r.sourceAddressPrefix],
    destinations: r.destinationAddressPrefixes?.length
      ? [...r.destinationAddressPrefixes].sort()
      : [r.destinationAddressPrefix],
  }));
  return { loadBalancers, publicIps, securityRules };
}

export type Inventory = Awaited<ReturnType<typeof inventory>>;
