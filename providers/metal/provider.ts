// The bare-metal provider: no cloud, just addresses. It hands out addresses from IPAddressPools with the
// allocator and publishes them in the Service's status; the speakers announce them. The controller is the
// only allocator, and its state is read back from the Services' status when it starts, never re-guessed.
import { ConfigurationError } from "../errors.ts";
import { METAL_ANNOTATION_CATALOG } from "./annotations/catalog.ts";
import type {
  EnsureResult,
  LoadBalancerIntent,
  LoadBalancerProvider,
  Notice,
  PlanDescription,
  ServiceRef,
} from "../provider.ts";
import {
  sharingBackend,
  type AllocationError,
  type Assignment,
  type PoolCounts,
  type ServiceForAllocation,
} from "../../shared/allocationTypes.ts";
import { Allocator } from "./allocator.ts";
import { addressChanged, refusalText } from "./allocationErrors.ts";
import { parseIP } from "../../shared/address.ts";
import { parsePool, type Pool, type PoolProblem } from "../../shared/pool.ts";
import {
  findAddressesInUse,
  findNodeAddressesInPools,
  findOverlappingPools,
  type NodeAddresses,
  type PoolFinding,
} from "./poolFindings.ts";
import {
  duplicateConcerning,
  splitDuplicates,
  withoutAnnouncement,
  type DuplicatePool,
  type PoolGroup,
  type PoolObject,
} from "./poolSources.ts";
import { POOL_RECORD_ANNOTATION, requestFromService } from "../../shared/request.ts";
import { inherit } from "./inherited.ts";
import { isServiceHolder, lanHostHolder, nodeHolder } from "./holders.ts";
import type { L2StatusFields } from "../../shared/l2status.ts";
import { metalTraffic, poolRecord } from "./traffic.ts";

export { METAL_LOAD_BALANCER_CLASS } from "../classes.ts";
export { POOL_RECORD_ANNOTATION } from "../../shared/request.ts";
export type { PoolObject } from "./poolSources.ts";

/** What the controller knows that the allocator needs: the pools, and what each Service holds now. */
export interface MetalInventory {
  pools(): PoolObject[];
  /** Addresses in the status of every Service this controller serves, oldest Service first. */
  assignments(): Assignment[];
  /** The nodes' own addresses: a pool containing one must never hand it out (a speaker would answer for it). */
  nodeAddresses(): NodeAddresses[];
  /**
   * The speakers' records of who announces the Service's addresses (ServiceL2Status); undefined (or absent)
   * when the controller cannot read them, and then the provider reports nothing about traffic.
   */
  announcements?(namespace: string, name: string): L2StatusFields[] | undefined;
  /** The addresses in the Service's status now (MetalLB's, or set by hand, before Portico first serves it). */
  statusAddresses?(namespace: string, name: string): string[];
}

export interface PoolState {
  counts: PoolCounts[];
  /** Pools that cannot be used as written, with what is wrong (a name defined by both kinds among them). */
  invalid: { pool: string; group: PoolGroup; problems: PoolProblem[] }[];
  /** Overlapping pools and node addresses inside pools: reported, and node addresses are never handed out. */
  findings: PoolFinding[];
}

/**
 * The pool is recorded only once the annotation catalog knows the key: the controller refuses a Service carrying
 * a portico.io/ key the catalog does not know, so recording it before would refuse every Service it addressed.
 */
const RECORDS_POOL = METAL_ANNOTATION_CATALOG.porticoKeys.some(
  (entry) => entry.key === POOL_RECORD_ANNOTATION,
);

/**
 * How long an address another host answered for stays out of use. Then it may be handed out again, and the
 * speaker that would announce it probes it again first: a host that left the LAN gives its address back.
 */
export const IN_USE_TTL_MS = 60 * 60_000;

interface InUseAddress {
  readonly mac: string;
  readonly since: number;
}

export class MetalProvider implements LoadBalancerProvider {
  readonly name = "metal";
  /** Releasing an address can let a waiting Service through: the controller looks at all again. */
  readonly capacityIsShared = true;
  readonly recordedAnnotations = RECORDS_POOL ? [POOL_RECORD_ANNOTATION] : [];
  private readonly inventory: MetalInventory;
  private allocator: Allocator | undefined;
  private poolsSeen = "";
  /** The node list the allocator was made with (or found equal to it), and its addresses as text. */
  private nodesSeen: { nodes: NodeAddresses[] | undefined; text: string } = { nodes: undefined, text: "" };
  /** Node addresses inside pools, found when the allocator was last made (from the same pools and nodes). */
  private nodeFindings: PoolFinding[] = [];
  private invalid: PoolState["invalid"] = [];
  private duplicates: DuplicatePool[] = [];
  /** Addresses the speakers found in use by another host, from their records, kept for IN_USE_TTL_MS. */
  private readonly inUse = new Map<string, InUseAddress>();
  private readonly now: () => number;
  /** Services whose status addresses were taken on and that have not been told so yet (inherited.ts). */
  private readonly inherited = new Set<string>();

  constructor(inventory: MetalInventory, now: () => number = Date.now) {
    this.inventory = inventory;
    this.now = now;
  }

  ensure(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const service = forAllocation(intent);
    const records = this.inventory.announcements?.(intent.service.namespace, intent.service.name);
    const moved = this.learnInUse(service.key, records ?? []);
    const allocator = this.current();
    const asked = request(intent);
    const status = this.statusOf(intent);
    this.refuseAmbiguous(service, asked, [...allocator.addressesOf(service.key), ...status]);
    // Addresses let go for a host found using them are not taken on again from the status they are still in.
    const taken = moved.length ? ({ kind: "none" } as const) : inherit(allocator, service, asked, status);
    if (taken.kind === "refused") throw taken.error;
    if (taken.kind === "kept") this.inherited.add(service.key);
    // A failed assignment changes nothing: what the Service held (and its status shows) stays its own.
    const result = allocator.assign(service, asked);
    if (!result.ok) throw allocationError(result.error);
    const addresses = result.addresses.map((a) => a.address);
    const kept = this.inherited.delete(service.key) && sameAddresses(addresses, status);
    const pools = RECORDS_POOL ? poolRecord(result.addresses) : undefined;
    const traffic = records && metalTraffic(intent, addresses, records);
    return Promise.resolve({
      ingress: addresses.map((ip) => ({ ip, ipMode: "VIP" as const })),
      ...(pools ? { recorded: { [POOL_RECORD_ANNOTATION]: pools } } : {}),
      ...(traffic ? { traffic } : {}),
      changes: kept
        ? [`kept ${describeKept(result.addresses)}, the address the Service had before Portico`]
        : result.changed
          ? [`assigned ${result.addresses.map((a) => `${a.address} from pool ${a.pool}`).join(", ")}`]
          : [],
      notices: [
        ...moved.map((m): Notice => ({
          type: "Warning",
          reason: "AddressInUse",
          message: `${m.address} is in use on the LAN by ${m.mac}, which is not a speaker: handed out ${addresses.join(", ") || "no other address"} instead`,
        })),
        ...result.skipped.map((s): Notice => ({
          type: "Warning",
          reason: "NoAddressOfFamily",
          message: `no ${s.family} address: ${refusalText(s.error)}`,
        })),
        // Clients reach the Service by its address: losing it unasked is a Warning, not just an update.
        ...result.replaced.map((r): Notice => ({
          type: "Warning",
          reason: "AddressChanged",
          message: addressChanged(r),
        })),
      ],
    });
  }

  /**
   * Takes in what the Service's records say another host uses. A new address (none announces it) is let go, so
   * the Service gets the next free one; an address already announced stays, reported (a takeover found it in
   * use: moving a serving address would cut its traffic as well). Returns the addresses let go.
   */
  private learnInUse(key: string, records: readonly L2StatusFields[]): { address: string; mac: string }[] {
    const found = records.flatMap((r) => r.inUse ?? []);
    if (found.length === 0) return [];
    const held = this.current().addressesOf(key);
    const moved: { address: string; mac: string }[] = [];
    for (const { address, mac } of found) {
      if (!this.inUse.has(address) || this.inUse.get(address)!.mac !== mac)
        this.inUse.set(address, { mac, since: this.now() });
      const announced = records.some((r) => r.addresses.includes(address));
      if (!announced && held.includes(address)) moved.push({ address, mac });
    }
    if (moved.length) this.allocator?.release(key);
    return moved;
  }

  plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    // A scratch copy: planning must not hold anything.
    const scratch = Allocator.fromAssignments(this.pools(), this.current().assignments());
    const service = forAllocation(intent);
    const asked = request(intent);
    const status = this.statusOf(intent);
    this.refuseAmbiguous(service, asked, [...scratch.addressesOf(service.key), ...status]);
    const taken = inherit(scratch, service, asked, status);
    if (taken.kind === "refused")
      return Promise.resolve({ operations: [`cannot keep: ${taken.error.message}`] });
    const result = scratch.assign(service, asked);
    const keeping =
      result.ok &&
      (taken.kind === "kept" || this.inherited.has(service.key)) &&
      sameAddresses(
        result.addresses.map((a) => a.address),
        status,
      );
    return Promise.resolve({
      operations: !result.ok
        ? [`cannot assign: ${refusalText(result.error)}`]
        : keeping
          ? [
              `keep ${describeKept(result.addresses)}: the address the Service already has (MetalLB's or set by hand)`,
            ]
          : result.changed
            ? [
                `assign ${result.addresses.map((a) => `${a.address} from pool ${a.pool}`).join(", ")}`,
                ...result.replaced.map((r) => `change address: ${addressChanged(r)}`),
              ]
            : [],
    });
  }

  delete(service: ServiceRef): Promise<void> {
    this.inherited.delete(`${service.namespace}/${service.name}`);
    this.current().release(`${service.namespace}/${service.name}`);
    return Promise.resolve();
  }

  /** Addresses live in Service status, not in a cloud: there is nothing to collect. */
  ownedServices(): Promise<ServiceRef[]> {
    return Promise.resolve([]);
  }

  /** Assigned and available addresses per pool. */
  poolCounts(): PoolCounts[] {
    return this.current().allPoolCounts();
  }

  /** Per-pool counts and invalid pools, for the pools' status. */
  poolState(): PoolState {
    const counts = this.current().allPoolCounts();
    const pools = this.pools();
    return {
      counts,
      invalid: this.invalid,
      findings: [
        ...findOverlappingPools(pools),
        ...this.nodeFindings,
        ...findAddressesInUse(
          pools,
          [...this.inUse].map(([address, u]) => ({
            address,
            mac: u.mac,
            since: new Date(u.since).toISOString(),
          })),
        ),
      ],
    };
  }

  private current(): Allocator {
    const pools = this.pools();
    const nodes = this.inventory.nodeAddresses();
    for (const [address, u] of this.inUse)
      if (this.now() - u.since > IN_USE_TTL_MS) this.inUse.delete(address);
    const seen = JSON.stringify([this.inventory.pools(), [...this.inUse.keys()].sort()]);
    // The inventory hands out the same array until a node changes: then only is it compared by content.
    const nodesText = nodes === this.nodesSeen.nodes ? this.nodesSeen.text : JSON.stringify(nodes);
    if (!this.allocator || seen !== this.poolsSeen || nodesText !== this.nodesSeen.text) {
      // A node's own address inside a pool is held by the node (holders.ts), and the allocator never gives it
      // to a Service.
      this.nodeFindings = findNodeAddressesInPools(pools, nodes);
      const reserved: Assignment[] = this.nodeFindings.flatMap((f) =>
        f.kind === "NodeAddressInPool"
          ? [{ serviceKey: nodeHolder(f.node), addresses: [f.address], ports: [] }]
          : [],
      );
      const fromInventory = this.allocator ? [] : this.inventory.assignments();
      for (const a of fromInventory) if (a.inherited) this.inherited.add(a.serviceKey);
      const held = this.allocator
        ? this.allocator.assignments().filter((a) => isServiceHolder(a.serviceKey))
        : fromInventory;
      // An address another host uses is held by that host, unless a Service announces it already.
      const taken = new Set(held.flatMap((a) => a.addresses));
      const inUse: Assignment[] = [...this.inUse.keys()]
        .filter((address) => !taken.has(address))
        .map((address) => ({ serviceKey: lanHostHolder(address), addresses: [address], ports: [] }));
      this.allocator = Allocator.fromAssignments(pools, [...reserved, ...inUse, ...held]);
    }
    this.poolsSeen = seen;
    this.nodesSeen = { nodes, text: nodesText };
    return this.allocator;
  }

  private statusOf(intent: LoadBalancerIntent): string[] {
    return this.inventory.statusAddresses?.(intent.service.namespace, intent.service.name) ?? [];
  }

  private pools(): Pool[] {
    const pools: Pool[] = [];
    const { unique, duplicates } = splitDuplicates(this.inventory.pools());
    this.duplicates = duplicates;
    this.invalid = this.inventory.pools().flatMap((obj) => {
      const dup = duplicates.find((d) => d.name === obj.name);
      const group = obj.group ?? "portico.io";
      return dup
        ? [{ pool: obj.name, group, problems: [{ field: "metadata.name", message: dup.message }] }]
        : [];
    });
    for (const obj of unique) {
      const parsed = parsePool(obj.name, withoutAnnouncement(obj.spec ?? {}));
      if (parsed.ok) pools.push(parsed.pool);
      else this.invalid.push({ pool: obj.name, group: obj.group ?? "portico.io", problems: parsed.problems });
    }
    return pools;
  }

  /** A Service that depends on a pool name defined by both kinds is refused until one is renamed. */
  private refuseAmbiguous(
    service: ServiceForAllocation,
    asked: ReturnType<typeof request>,
    held: readonly string[],
  ): void {
    if (this.duplicates.length === 0) return;
    const heldFamilies = held.flatMap((text) => {
      const parsed = parseIP(text);
      return parsed.ok ? [parsed.value.family] : [];
    });
    const dup = duplicateConcerning(this.duplicates, {
      identity: {
        namespace: service.key.split("/")[0] ?? "",
        namespaceLabels: service.namespaceLabels ?? {},
        labels: service.labels ?? {},
      },
      ...(asked.pool ? { pool: asked.pool } : {}),
      addresses: [...held, ...(asked.addresses ?? [])],
      unservedFamilies: (service.ipFamilies ?? ["IPv4"]).filter((family) => !heldFamilies.includes(family)),
    });
    if (!dup) return;
    const field = dup.name === asked.pool ? (asked.poolField ?? "metadata.annotations") : "spec";
    throw new ConfigurationError("DuplicatePoolName", field, dup.message, "");
  }
}

function sameAddresses(a: readonly string[], b: readonly string[]): boolean {
  const canon = (list: readonly string[]) =>
    list
      .map((t) => {
        const p = parseIP(t);
        return p.ok ? p.value.text : t;
      })
      .sort()
      .join(",");
  return a.length > 0 && canon(a) === canon(b);
}

/** `192.168.10.5 (in pool lan)`, for each address. */
function describeKept(addresses: readonly { address: string; pool: string }[]): string {
  return addresses.map((a) => `${a.address} (in pool ${a.pool})`).join(", ");
}

function forAllocation(intent: LoadBalancerIntent): ServiceForAllocation {
  return {
    key: `${intent.service.namespace}/${intent.service.name}`,
    namespaceLabels: intent.namespaceLabels,
    labels: intent.serviceLabels,
    ports: intent.ports.map((p) => ({ protocol: p.protocol, port: p.port })),
    ipFamilies: intent.ipFamilies,
    ipFamilyPolicy: intent.ipFamilyPolicy,
    backend: sharingBackend(intent.externalTrafficPolicy, intent.selector),
  };
}

function request(intent: LoadBalancerIntent) {
  const parsed = requestFromService({
    ...(intent.loadBalancerIP ? { loadBalancerIP: intent.loadBalancerIP } : {}),
    annotations: intent.annotations,
  });
  if (!parsed.ok) throw allocationError(parsed.error);
  return parsed.request;
}

/** The refusal as the controller tells it: the field first (ConfigurationError puts it there), once. */
function allocationError(error: AllocationError): ConfigurationError {
  const field = error.field ?? "spec";
  return new ConfigurationError(error.reason, field, error.message, "");
}
