// What exists in ARM that may concern a Service, read fresh each time (never remembered), so a restarted
// controller finds everything it made. Reads only; which parts are whose is decided by the pure plan.
//
// Reconciles running at once share their reads (SharedObservations): a reconcile joins the next observation
// that starts after it asked, never one already under way, so what it sees is as fresh as a read of its own
// would be, and a burst of N Services costs a few list calls instead of N of each.
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

type Observation = Observed & { at: number };

export class SharedObservations {
  private readonly slots = new Map<string, { running?: Promise<Observation>; next?: Promise<Observation> }>();

  private readonly clients: AzureClients;
  private readonly read: (clients: AzureClients, where: Where) => Promise<Observation>;

  constructor(
    clients: AzureClients,
    read: (clients: AzureClients, where: Where) => Promise<Observation> = observe,
  ) {
    this.clients = clients;
    this.read = read;
  }

  /** An observation of `where` that started after this call; each caller gets lists of its own to extend. */
  async observe(where: Where): Promise<Observation> {
    const key = JSON.stringify([
      where.loadBalancerGroup.toLowerCase(),
      [...new Set(where.publicIpGroups.map((g) => g.toLowerCase()))].sort(),
      where.securityGroup ?? null,
    ]);
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = {}));
    const s = slot;
    if (!s.next) {
      const ignore = () => undefined;
      const next: Promise<Observation> = (s.running ?? Promise.resolve()).then(ignore, ignore).then(() => {
        if (s.next === next) delete s.next;
        const running = this.read(this.clients, where);
        s.running = running;
        void running.then(ignore, ignore).then(() => {
          if (s.running !== running) return;
          delete s.running;
          if (!s.next) this.slots.delete(key);
        });
        return running;
      });
      s.next = next;
    }
    const o = await s.next;
    return { ...o, loadBalancers: [...o.loadBalancers], publicIps: [...o.publicIps] };
  }
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
