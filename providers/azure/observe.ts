// What exists in ARM that may concern a Service, read fresh each time (never remembered), so a restarted
// controller finds everything it made. Reads only; which parts are whose is decided by the pure plan.
import { call, isNotFound, type AzureClients } from "./clients.ts";
import type { LoadBalancer, NetworkSecurityGroup, Observed, PublicIPAddress } from "./model.ts";

export interface Where {
  loadBalancerGroup: string;
  publicIpGroups: string[];
  securityGroup?: { resourceGroup: string; name: string };
}

/** The observation and when it started (performance.now()), so later writes know how fresh it is. */
export async function observe(clients: AzureClients, where: Where): Promise<Observed & { at: number }> {
  const at = performance.now();
  const [loadBalancers, publicIps, securityGroup] = await Promise.all([
    listLoadBalancers(clients, where.loadBalancerGroup),
    Promise.all([...new Set(where.publicIpGroups)].map((rg) => listPublicIps(clients, rg))).then((l) =>
      l.flat(),
    ),
    where.securityGroup ? getSecurityGroup(clients, where.securityGroup) : Promise.resolve(undefined),
  ]);
  return { loadBalancers, publicIps, ...(securityGroup ? { securityGroup } : {}), at };
}

export function listLoadBalancers(clients: AzureClients, resourceGroup: string): Promise<LoadBalancer[]> {
  return call("loadBalancers:list", () => collect(clients.network.loadBalancers.list(resourceGroup)));
}

export async function listPublicIps(
  clients: AzureClients,
  resourceGroup: string,
): Promise<PublicIPAddress[]> {
  try {
    return await call("publicIPAddresses:list", () =>
      collect(clients.network.publicIPAddresses.list(resourceGroup)),
    );
  } catch (err) {
    // A resource group named by a Service's annotation that does not exist holds no public IPs.
    if (isNotFound(err)) return [];
    throw err;
  }
}

export async function getSecurityGroup(
  clients: AzureClients,
  where: { resourceGroup: string; name: string },
): Promise<NetworkSecurityGroup | undefined> {
  try {
    return await call("networkSecurityGroups:get", () =>
      clients.network.networkSecurityGroups.get(where.resourceGroup, where.name),
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function collect<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of pages) out.push(item);
  return out;
}
