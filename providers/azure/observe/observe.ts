// What exists in ARM that may concern a Service, read fresh each time (never remembered), so a restarted
// controller finds everything it made. Reads only; which parts are whose is decided by the pure plan.
//
// Reconciles running at once share their reads (SharedObservations): a reconcile joins the next observation
// that starts after it asked, never one already under way, so what it sees is as fresh as a read of its own
// would be, and a burst of N Services costs a few list calls instead of N of each. Under a sustained burst the
// reads would otherwise run back to back, each listing every load balancer, public IP and security rule of the
// cluster (O(Services) bytes, parsed by the controller, rendered by ARM) for the few reconciles that arrived
// during the one before: so one starts no sooner than OBSERVATION_SPACING_MS after the previous one started,
// and more reconciles share it. A reconcile arriving when none started recently waits for nothing more.
import { call, isNotFound, type AzureClients } from "../arm/clients.ts";
import type { LoadBalancer, NetworkSecurityGroup, Observed, PublicIPAddress } from "../model.ts";

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

/** Least time between the starts of two observations of the same place (see above). */
export const OBSERVATION_SPACING_MS = 1000;

export interface Spacing {
  minIntervalMs?: number;
  /**
   * How many callers may ask for an observation soon (e.g. the reconciles under way in the provider). Once all of
   * them wait for the next observation, nobody else can join it and it starts without waiting out the spacing.
   * Without it, the spacing is always waited out.
   */
  askers?: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface Slot {
  running?: Promise<Observation>;
  next?: Promise<Observation>;
  /** Callers waiting for `next`. */
  waiting: number;
  /** Ends the wait of `next` for the spacing, while it waits. */
  startNow?: () => void;
}

export class SharedObservations {
  private readonly slots = new Map<string, Slot>();
  /** When the last observation of each place started (kept after its slot goes: a few places per cluster). */
  private readonly lastStart = new Map<string, number>();

  private readonly clients: AzureClients;
  private readonly read: (clients: AzureClients, where: Where) => Promise<Observation>;
  private readonly minIntervalMs: number;
  private readonly askers: () => number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    clients: AzureClients,
    read: (clients: AzureClients, where: Where) => Promise<Observation> = observe,
    spacing: Spacing = {},
  ) {
    this.clients = clients;
    this.read = read;
    this.minIntervalMs = spacing.minIntervalMs ?? OBSERVATION_SPACING_MS;
    this.askers = spacing.askers ?? (() => Infinity);
    this.now = spacing.now ?? (() => performance.now());
    this.sleep = spacing.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** An observation of `where` that started after this call; each caller gets lists of its own to extend. */
  async observe(where: Where): Promise<Observation> {
    const key = JSON.stringify([
      where.loadBalancerGroup.toLowerCase(),
      [...new Set(where.publicIpGroups.map((g) => g.toLowerCase()))].sort(),
      where.securityGroup ?? null,
    ]);
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = { waiting: 0 }));
    const s = slot;
    if (!s.next) {
      const ignore = () => undefined;
      const next: Promise<Observation> = (s.running ?? Promise.resolve())
        .then(ignore, ignore)
        .then(async () => {
          // Those arriving meanwhile join this one: they too asked before it starts.
          const wait = (this.lastStart.get(key) ?? -Infinity) + this.minIntervalMs - this.now();
          if (wait > 0) {
            const early = new Promise<void>((resolve) => (s.startNow = resolve));
            this.poke();
            await Promise.race([this.sleep(wait), early]);
            delete s.startNow;
          }
          if (s.next === next) {
            delete s.next;
            s.waiting = 0;
          }
          this.lastStart.set(key, this.now());
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
    s.waiting++;
    this.poke();
    const o = await s.next;
    return { ...o, loadBalancers: [...o.loadBalancers], publicIps: [...o.publicIps] };
  }

  /** Starts every observation waiting for the spacing that all who may ask are waiting for; call when one leaves. */
  poke(): void {
    const askers = this.askers();
    for (const s of this.slots.values()) if (s.startNow && s.waiting >= askers) s.startNow();
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
