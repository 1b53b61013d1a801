// The contract between the generic ARM request handling (handlers.ts) and each resource type: how to read a
// request body, what to check before accepting a write, how to render the resource, and what the platform does
// when a write completes.
import type { BodyObject, Json } from "./body.ts";
import type { Faults } from "./faults.ts";
import type { NetworkResource, Sku } from "./model.ts";
import type { Operations } from "./operations.ts";
import type { RuleHealth } from "./ruleHealth.ts";
import type { Store } from "./store.ts";

export interface EmulatorConfig {
  /** How long a PUT or DELETE stays in progress before it completes (ms). */
  operationDurationMs: number;
  /** The Retry-After (seconds) on long-running operation responses and on retryable 429s; 0 leaves it out. */
  retryAfterSeconds: number;
  /** Whether a write to a resource whose previous operation is still running gets 409 AnotherOperationInProgress. */
  conflictOnConcurrentWrite: boolean;
  /** Lists longer than this come in pages linked by nextLink; 0 returns everything at once. */
  listPageSize: number;
  /** Azure's documented networking limits that NRP enforces (see limits.ts). */
  limits: Limits;
}

/** A change of settings: the limits given replace only those. */
export type ConfigChange = Partial<Omit<EmulatorConfig, "limits">> & { limits?: Partial<Limits> };

/**
 * Documented limits of Azure networking, each refused as NRP refuses it. The defaults are Azure's values for a
 * Standard load balancer; 0 turns a check off.
 */
export interface Limits {
  /** Frontend IP configurations of one load balancer (Basic: at most 200). */
  frontendIPConfigurationsPerLoadBalancer: number;
  /** Load-balancing rules of one load balancer (Basic: at most 250). */
  rulesPerLoadBalancer: number;
  /** Load-balancing and outbound rules reaching one backend address, over every load balancer (Azure: per NIC). */
  rulesPerBackendAddress: number;
  /** Addresses in one backend pool (Basic: at most 300). */
  addressesPerBackendPool: number;
  /** Backend addresses the rules of one frontend reach, each rule counting every address of its pool. */
  backendAddressesPerFrontend: number;
  /** The same, over every frontend of one load balancer. */
  backendAddressesPerLoadBalancer: number;
  /** Security rules of one network security group (its default rules not counted). */
  securityRulesPerGroup: number;
  /** IP addresses and ranges in one security group's rules, sources and destinations each counted on their own. */
  addressPrefixesPerSecurityGroup: number;
  /** Public IP addresses of the subscription in one region, Basic and Standard together. */
  publicIpAddressesPerRegion: number;
}

export interface Context {
  store: Store;
  operations: Operations;
  faults: Faults;
  config: EmulatorConfig;
  baseUrl: string;
  subscriptionId: string;
  ruleHealth: RuleHealth;
}

/** What a resource body contributes besides its properties. */
export interface ParsedResource<P> {
  properties: P;
  sku?: Sku;
  zones?: string[];
}

export interface ChildKind<R extends NetworkResource> {
  /** The URL segment and the property array, in ARM's casing (e.g. backendAddressPools). */
  segment: string;
  /** Child types that can be written on their own; the others are read-only views of the parent. */
  upsert?: (parent: R, name: string, body: BodyObject, ctx: Context) => R["properties"];
  remove?: (parent: R, name: string, ctx: Context) => R["properties"];
}

export interface ResourceKind<R extends NetworkResource> {
  type: R["type"];
  /** NRP's operation noun: PutLoadBalancerOperation, DeleteLoadBalancerOperation... */
  operationNoun: string;
  parse(body: BodyObject, id: string, ctx: Context): ParsedResource<R["properties"]>;
  /** Cross-resource checks and platform assignments (private IPs) for a write about to be accepted. */
  admit(candidate: R, existing: R | undefined, ctx: Context): void;
  render(resource: R, ctx: Context): Json;
  /** The platform's part once a write completes (e.g. assigning a public address). */
  onProvisioned?(resource: R, ctx: Context): void;
  /** The platform's part once a delete completes (e.g. releasing a public address). */
  onDeleted?(resource: R, ctx: Context): void;
  /** Refuses a delete while other resources depend on this one. */
  checkDelete?(resource: R, ctx: Context): void;
  children: Record<string, ChildKind<R>>;
}

/** The read-only envelope every Microsoft.Network resource shares. */
export function renderEnvelope(r: NetworkResource, properties: Json): Json {
  const out: Json = {
    name: r.name,
    id: r.id,
    etag: r.etag,
    type: `Microsoft.Network/${r.type}`,
    location: r.location,
  };
  if (Object.keys(r.tags).length) out.tags = r.tags;
  out.properties = { provisioningState: r.provisioningState, resourceGuid: r.resourceGuid, ...properties };
  if (r.sku) out.sku = r.sku;
  if (r.zones?.length) out.zones = r.zones;
  return out;
}

/** A child resource as NRP renders it: it shares its parent's etag and provisioning state. */
export function renderChild(parent: NetworkResource, segment: string, name: string, properties: Json): Json {
  return {
    name,
    id: `${parent.id}/${segment}/${name}`,
    etag: parent.etag,
    type: `Microsoft.Network/${parent.type}/${segment}`,
    properties: { provisioningState: parent.provisioningState, ...properties },
  };
}

export const ref = (id: string | undefined): Json | undefined => (id ? { id } : undefined);

/** Drops undefined values so rendered JSON carries only what is set, like ARM's. */
export function compact(o: Json): Json {
  // A loop, not fromEntries(entries().filter()): it renders every child of every resource on every read.
  const out: Json = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
