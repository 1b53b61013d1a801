// All state of the emulated subscription, in memory: resource groups, Microsoft.Network resources keyed by their
// case-insensitive ID, and the pools public addresses are handed out from. `reset()` empties everything.
import { randomUUID } from "node:crypto";
import { BackReferences } from "./backReferences.ts";
import { idKey } from "./ids.ts";
import { bigIntToIp, ipToBigInt } from "./ipam.ts";
import type { NetworkResource, ResourceGroup } from "./model.ts";

/** Public addresses come from ranges reserved for benchmarking and documentation, so they never route anywhere. */
const PUBLIC_V4_BASE = ipToBigInt("198.18.0.0")!.value;
const PUBLIC_V6_BASE = ipToBigInt("2001:db8:ac::")!.value;
/** Public IP prefixes come from their own ranges, in blocks of the largest size Azure offers (16 addresses). */
const PREFIX_V4_BASE = ipToBigInt("198.19.0.0")!.value;
const PREFIX_V6_BASE = ipToBigInt("2001:db8:ad::")!.value;
const PREFIX_BLOCK = 16n;

export class Store {
  readonly resourceGroups = new Map<string, ResourceGroup>();
  /** Every resource by key, in the order first created (as ARM lists them). Written only by put and delete. */
  readonly resources = new Map<string, NetworkResource>();
  /** The same resources by type, so that a type's resources are found without visiting every other one. */
  private readonly byType = new Map<string, Map<string, NetworkResource>>();
  /** When each key was first stored: back-references answer in the order a scan of `resources` would. */
  private readonly created = new Map<string, number>();
  private nextCreated = 0;
  readonly backReferences = new BackReferences();
  private publicV4Next = 1n;
  private publicV6Next = 1n;
  private prefixNext = 0n;
  private readonly releasedV4: string[] = [];

  reset(): void {
    this.resourceGroups.clear();
    this.resources.clear();
    this.byType.clear();
    this.created.clear();
    this.backReferences.clear();
    this.publicV4Next = 1n;
    this.publicV6Next = 1n;
    this.prefixNext = 0n;
    this.releasedV4.length = 0;
  }

  resourceGroup(subscriptionId: string, name: string): ResourceGroup | undefined {
    return this.resourceGroups.get(`${subscriptionId}/${name}`.toLowerCase());
  }

  putResourceGroup(rg: ResourceGroup): void {
    this.resourceGroups.set(`${rg.subscriptionId}/${rg.name}`.toLowerCase(), rg);
  }

  deleteResourceGroup(rg: ResourceGroup): void {
    for (const r of this.inResourceGroup(rg.subscriptionId, rg.name)) this.delete(r.id);
    this.resourceGroups.delete(`${rg.subscriptionId}/${rg.name}`.toLowerCase());
  }

  get(id: string): NetworkResource | undefined {
    return this.resources.get(idKey(id));
  }

  getOfType<T extends NetworkResource["type"]>(
    id: string,
    type: T,
  ): Extract<NetworkResource, { type: T }> | undefined {
    const r = this.get(id);
    return r && r.type === type ? (r as Extract<NetworkResource, { type: T }>) : undefined;
  }

  put(resource: NetworkResource): void {
    const key = idKey(resource.id);
    const previous = this.resources.get(key);
    if (previous && previous.type !== resource.type) this.byType.get(previous.type)?.delete(key);
    if (!previous) this.created.set(key, this.nextCreated++);
    this.resources.set(key, resource);
    let ofType = this.byType.get(resource.type);
    if (!ofType) this.byType.set(resource.type, (ofType = new Map<string, NetworkResource>()));
    ofType.set(key, resource);
    this.backReferences.put(resource);
  }

  delete(id: string): void {
    const key = idKey(id);
    const previous = this.resources.get(key);
    if (!previous) return;
    this.resources.delete(key);
    this.byType.get(previous.type)?.delete(key);
    this.created.delete(key);
    this.backReferences.remove(id);
  }

  /** Where `key` stands in the order resources were first stored. */
  readonly creationOrder = (key: string): number => this.created.get(key) ?? Infinity;

  ofType<T extends NetworkResource["type"]>(type: T): Extract<NetworkResource, { type: T }>[] {
    return [...(this.byType.get(type)?.values() ?? [])] as Extract<NetworkResource, { type: T }>[];
  }

  inResourceGroup(subscriptionId: string, resourceGroup: string): NetworkResource[] {
    const prefix = `/subscriptions/${subscriptionId}/resourcegroups/${resourceGroup}/`.toLowerCase();
    return [...this.resources.values()].filter((r) => idKey(r.id).startsWith(prefix));
  }

  allocatePublicAddress(version: "IPv4" | "IPv6"): string {
    if (version === "IPv6") return bigIntToIp(PUBLIC_V6_BASE + this.publicV6Next++, 6);
    const reused = this.releasedV4.shift();
    if (reused) return reused;
    return bigIntToIp(PUBLIC_V4_BASE + this.publicV4Next++, 4);
  }

  /** A fresh block for a public IP prefix of `length` bits (/28-/31, /124-/127), aligned to its size. */
  allocatePublicPrefix(version: "IPv4" | "IPv6", length: number): string {
    const block = this.prefixNext++ * PREFIX_BLOCK;
    if (version === "IPv6") return `${bigIntToIp(PREFIX_V6_BASE + block, 6)}/${length}`;
    return `${bigIntToIp(PREFIX_V4_BASE + block, 4)}/${length}`;
  }

  releasePublicAddress(ip: string): void {
    if (ipToBigInt(ip)?.version === 4) this.releasedV4.push(ip);
  }
}

export const newEtag = (): string => `W/"${randomUUID()}"`;
