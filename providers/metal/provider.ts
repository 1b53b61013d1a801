// The bare-metal provider: no cloud, just addresses. It hands out addresses from IPAddressPools with the
// allocator and publishes them in the Service's status; the speakers announce them. The controller is the
// only allocator, and its state is read back from the Services' status when it starts, never re-guessed.
import { entryFor } from "../annotationKeys/review.ts";
import { ConfigurationError } from "../errors.ts";
import type {
  EnsureResult,
  LoadBalancerIntent,
  LoadBalancerProvider,
  PlanDescription,
  ServiceRef,
} from "../provider.ts";
import type { AllocationError, Assignment, PoolCounts, ServiceForAllocation } from "./allocationTypes.ts";
import { Allocator } from "./allocator.ts";
import { parseIP } from "./address.ts";
import { parsePool, type Pool, type PoolProblem } from "./pool.ts";
import {
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
import { POOL_RECORD_ANNOTATION, requestFromService } from "./request.ts";
import type { L2StatusFields } from "./l2status.ts";
import { metalTraffic, poolRecord } from "./traffic.ts";

export { METAL_LOAD_BALANCER_CLASS } from "../classes.ts";
export { POOL_RECORD_ANNOTATION } from "./request.ts";
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
const RECORDS_POOL = entryFor(POOL_RECORD_ANNOTATION) !== undefined;

export class MetalProvider implements LoadBalancerProvider {
  readonly name = "metal";
  /** Releasing an address can let a waiting Service through: the controller looks at all again. */
  readonly capacityIsShared = true;
  readonly recordedAnnotations = RECORDS_POOL ? [POOL_RECORD_ANNOTATION] : [];
  private readonly inventory: MetalInventory;
  private allocator: Allocator | undefined;
  private poolsSeen = "";
  private invalid: PoolState["invalid"] = [];
  private duplicates: DuplicatePool[] = [];

  constructor(inventory: MetalInventory) {
    this.inventory = inventory;
  }

  ensure(intent: LoadBalancerIntent): Promise<EnsureResult> {
    const allocator = this.current();
    const service = forAllocation(intent);
    const asked = request(intent);
    this.refuseAmbiguous(service, asked, allocator.addressesOf(service.key));
    // A failed assignment changes nothing: what the Service held (and its status shows) stays its own.
    const result = allocator.assign(service, asked);
    if (!result.ok) throw allocationError(result.error);
    const addresses = result.addresses.map((a) => a.address);
    const pools = RECORDS_POOL ? poolRecord(result.addresses) : undefined;
    const records = this.inventory.announcements?.(intent.service.namespace, intent.service.name);
    const traffic = records && metalTraffic(addresses, records, intent.endpoints.length > 0);
    return Promise.resolve({
      ingress: addresses.map((ip) => ({ ip, ipMode: "VIP" as const })),
      ...(pools ? { recorded: { [POOL_RECORD_ANNOTATION]: pools } } : {}),
      ...(traffic ? { traffic } : {}),
      changes: result.changed
        ? [`assigned ${result.addresses.map((a) => `${a.address} from pool ${a.pool}`).join(", ")}`]
        : [],
      notices: result.skipped.map((s) => `no ${s.family} address: ${s.error.message}`),
    });
  }

  plan(intent: LoadBalancerIntent): Promise<PlanDescription> {
    // A scratch copy: planning must not hold anything.
    const scratch = Allocator.fromAssignments(this.pools(), this.current().assignments());
    const service = forAllocation(intent);
    const asked = request(intent);
    this.refuseAmbiguous(service, asked, scratch.addressesOf(service.key));
    const result = scratch.assign(service, asked);
    return Promise.resolve({
      operations: !result.ok
        ? [`cannot assign: ${result.error.message}`]
        : result.changed
          ? [`assign ${result.addresses.map((a) => `${a.address} from pool ${a.pool}`).join(", ")}`]
          : [],
    });
  }

  delete(service: ServiceRef): Promise<void> {
    this.current().release(`${service.namespace}/${service.name}`);
    return Promise.resolve();
  }

  /** Addresses live in Service status, not in a cloud: there is nothing to collect. */
  ownedServices(): Promise<ServiceRef[]> {
    return Promise.resolve([]);
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
        ...findNodeAddressesInPools(pools, this.inventory.nodeAddresses()),
      ],
    };
  }

  private current(): Allocator {
    const pools = this.pools();
    const nodes = this.inventory.nodeAddresses();
    const seen = JSON.stringify([this.inventory.pools(), nodes]);
    if (!this.allocator || seen !== this.poolsSeen) {
      // A node's own address inside a pool is held by the node ("~" cannot begin a namespace, so the key is
      // never a Service's), and the allocator never gives it to a Service.
      const reserved: Assignment[] = findNodeAddressesInPools(pools, nodes).flatMap((f) =>
        f.kind === "NodeAddressInPool"
          ? [{ serviceKey: `~node/${f.node}`, addresses: [f.address], ports: [] }]
          : [],
      );
      const held = this.allocator
        ? this.allocator.assignments().filter((a) => !a.serviceKey.startsWith("~node/"))
        : this.inventory.assignments();
      this.allocator = Allocator.fromAssignments(pools, [...reserved, ...held]);
    }
    this.poolsSeen = seen;
    return this.allocator;
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

function forAllocation(intent: LoadBalancerIntent): ServiceForAllocation {
  return {
    key: `${intent.service.namespace}/${intent.service.name}`,
    namespaceLabels: intent.namespaceLabels,
    labels: intent.serviceLabels,
    ports: intent.ports.map((p) => ({ protocol: p.protocol, port: p.port })),
    ipFamilies: intent.ipFamilies,
    ipFamilyPolicy: intent.ipFamilyPolicy,
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

function allocationError(error: AllocationError): ConfigurationError {
  const field = error.field ?? "spec";
  return new ConfigurationError(error.reason, field, error.message, "");
}
