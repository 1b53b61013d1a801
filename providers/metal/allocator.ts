// The bare-metal address allocator. The controller is the only allocator in the cluster; it rebuilds this
// state from what Services already hold (their status) after every restart, so allocations are read
// back, never re-guessed. All methods are synchronous and pure apart from the allocator's own state.
import { ipFromValue, parseIP, type IPAddress, type IPFamily } from "../../shared/address.ts";
import {
  familyUnavailable,
  notAllowed,
  notInAnyPool,
  notKept,
  outsideNamedPool,
  poolExhausted,
  poolNotFound,
} from "./allocationErrors.ts";
import { AddressBook, type Holder } from "./addressBook.ts";
import {
  namespaceOf,
  type AllocationError,
  type AllocationRequest,
  type AssignedAddress,
  type Assignment,
  type AssignResult,
  type PoolCounts,
  type ReplacedAddress,
  type RestoreProblem,
  type ServiceForAllocation,
  type SkippedFamily,
} from "../../shared/allocationTypes.ts";
import { planFamilies, type FamilyWant } from "./families.ts";
import {
  comparePools,
  poolAllowsService,
  poolContains,
  poolFamilies,
  poolSize,
  poolPositions,
  type PoolPosition,
  type Pool,
  type ServiceIdentity,
} from "../../shared/pool.ts";

interface Held {
  readonly holder: Holder;
  readonly addresses: readonly IPAddress[];
}

/** Everything one assign call needs to know about the Service and its request. */
interface Attempt {
  readonly identity: ServiceIdentity;
  readonly holder: Holder;
  readonly request: AllocationRequest;
  readonly namedPool: Pool | undefined;
  readonly current: Held | undefined;
}

export class Allocator {
  /** Most preferred first. */
  private readonly pools: readonly Pool[];
  private readonly poolsByName: ReadonlyMap<string, Pool>;
  private readonly book = new AddressBook();
  private readonly held = new Map<string, Held>();
  private readonly problems: RestoreProblem[] = [];
  /**
   * Per pool and family, where a search for a free address may start: every address before it is held. Without
   * it each new Service walked the pool from its first address (at thousands of Services, most of what an
   * allocation cost). Freeing an address sends every search back to the start.
   */
  private readonly firstMaybeFree = new Map<string, PoolPosition>();

  constructor(pools: readonly Pool[]) {
    const byName = new Map<string, Pool>();
    for (const pool of pools) {
      if (byName.has(pool.name)) throw new TypeError(`two IPAddressPools are named ${pool.name}`);
      byName.set(pool.name, pool);
    }
    this.poolsByName = byName;
    this.pools = [...pools].sort(comparePools);
  }

  /**
   * Rebuilds the state from assignments read back from Services. Earlier assignments win: pass them
   * oldest Service first. An address that would be double-booked (or is not an address at all) is left
   * out and reported in `restoreProblems`; addresses outside every pool are kept, because the Service
   * still uses them until it is given a new one.
   */
  static fromAssignments(pools: readonly Pool[], assignments: Iterable<Assignment>): Allocator {
    const allocator = new Allocator(pools);
    for (const assignment of assignments) allocator.restore(assignment);
    return allocator;
  }

  /** The same assignments under a new set of pools (after an IPAddressPool changed). */
  withPools(pools: readonly Pool[]): Allocator {
    return Allocator.fromAssignments(pools, this.assignments());
  }

  get restoreProblems(): readonly RestoreProblem[] {
    return this.problems;
  }

  private restore(assignment: Assignment): void {
    const holder: Holder = {
      serviceKey: assignment.serviceKey,
      sharingKey: assignment.sharingKey || undefined,
      ports: [...assignment.ports],
      backend: assignment.backend ?? "",
    };
    const problem = (address: string, error: AllocationError): void =>
      void this.problems.push({ serviceKey: assignment.serviceKey, address, error });
    if (this.held.has(assignment.serviceKey)) {
      for (const text of assignment.addresses) {
        problem(text, {
          reason: "InvalidRequestedAddress",
          address: text,
          message: `Service ${assignment.serviceKey} was read back twice; only its first assignment is kept`,
        });
      }
      return;
    }
    const kept: IPAddress[] = [];
    for (const text of assignment.addresses) {
      const parsed = parseIP(text);
      if (!parsed.ok) {
        problem(text, { reason: "InvalidRequestedAddress", address: text, message: parsed.problem });
        continue;
      }
      const address = parsed.value;
      if (kept.some((each) => each.family === address.family)) {
        problem(text, {
          reason: "InvalidRequestedAddress",
          address: address.text,
          message: `Service ${assignment.serviceKey} holds two ${address.family} addresses; only the first is kept`,
        });
        continue;
      }
      const conflict = this.book.conflictFor(address, holder, undefined, true);
      if (conflict) {
        problem(text, conflict);
        continue;
      }
      if (!this.pools.some((pool) => poolContains(pool, address))) {
        problem(text, notInAnyPool(address, undefined, this.pools));
        // Only the controller's own allocations outside every pool are kept (the Service still uses them);
        // an inherited one was never Portico's to hand out.
        if (assignment.inherited) continue;
      }
      kept.push(address);
    }
    this.commit(holder, kept);
  }

  /**
   * Takes on addresses a Service already holds from before this controller (its status), as one assignment:
   * all of them, or none when any is outside every pool or taken; returns the problems (none: taken on).
   */
  adopt(assignment: Assignment): RestoreProblem[] {
    const before = this.problems.length;
    this.restore({ ...assignment, inherited: true });
    const problems = this.problems.splice(before);
    if (problems.length) this.release(assignment.serviceKey);
    return problems;
  }

  /**
   * Gives the Service its addresses: keeps what it holds while that is still valid (so calling this
   * again returns the same answer), otherwise picks new ones. On failure nothing changes, so the
   * Service keeps what it had.
   */
  assign(service: ServiceForAllocation, request: AllocationRequest = {}): AssignResult {
    const plan = planFamilies(service, request);
    if (!plan.ok) return plan;

    const identity: ServiceIdentity = {
      namespace: namespaceOf(service.key),
      namespaceLabels: service.namespaceLabels ?? {},
      labels: service.labels ?? {},
    };
    let namedPool: Pool | undefined;
    if (request.pool !== undefined && request.pool !== "") {
      const named = this.checkNamedPool(request.pool, request.poolField, identity);
      if (!named.ok) return named;
      namedPool = named.pool;
    }
    const attempt: Attempt = {
      identity,
      holder: {
        serviceKey: service.key,
        sharingKey: request.sharingKey?.trim() || undefined,
        ports: service.ports.map((port) => ({ protocol: port.protocol, port: port.port })),
        backend: service.backend ?? "",
      },
      request,
      namedPool,
      current: this.held.get(service.key),
    };

    const chosen: AssignedAddress[] = [];
    const addresses: IPAddress[] = [];
    const skipped: SkippedFamily[] = [];
    const replaced: ReplacedAddress[] = [];
    for (const want of plan.wants) {
      const picked = this.pickForFamily(want, attempt);
      const lost = this.givenUp(want, attempt, picked);
      if (lost) replaced.push(lost);
      if ("error" in picked) {
        if (want.required) return { ok: false, error: picked.error };
        skipped.push({ family: want.family, error: picked.error });
        continue;
      }
      addresses.push(picked.address);
      chosen.push({ address: picked.address.text, family: picked.address.family, pool: picked.pool.name });
    }

    const before = attempt.current?.addresses.map((address) => address.text) ?? [];
    const changed =
      before.length !== addresses.length ||
      addresses.some((address, index) => address.text !== before[index]) ||
      !sameHolder(attempt.current?.holder, attempt.holder);
    this.commit(attempt.holder, addresses);
    return { ok: true, addresses: chosen, changed, skipped, replaced };
  }

  /** Frees everything the Service holds; returns the addresses it held. */
  release(serviceKey: string): string[] {
    const released = this.unhold(serviceKey);
    if (released.length) this.firstMaybeFree.clear();
    return released.map((address) => address.text);
  }

  private unhold(serviceKey: string): readonly IPAddress[] {
    const current = this.held.get(serviceKey);
    if (!current) return [];
    for (const address of current.addresses) this.book.remove(address, serviceKey);
    this.held.delete(serviceKey);
    return current.addresses;
  }

  /** The Service's current addresses (canonical text, primary family first). */
  addressesOf(serviceKey: string): string[] {
    return this.held.get(serviceKey)?.addresses.map((address) => address.text) ?? [];
  }

  /** A snapshot of all assignments, sorted by Service key; feeding it to fromAssignments recreates this state. */
  assignments(): Assignment[] {
    return [...this.held.values()]
      .map(({ holder, addresses }) => ({
        serviceKey: holder.serviceKey,
        addresses: addresses.map((address) => address.text),
        ...(holder.sharingKey === undefined ? {} : { sharingKey: holder.sharingKey }),
        ports: holder.ports.map((port) => ({ ...port })),
        ...(holder.backend ? { backend: holder.backend } : {}),
      }))
      .sort((a, b) => (a.serviceKey < b.serviceKey ? -1 : a.serviceKey > b.serviceKey ? 1 : 0));
  }

  /** Services holding an address (several when it is shared). */
  servicesUsing(address: string): string[] {
    const parsed = parseIP(address);
    if (!parsed.ok) return [];
    return this.book
      .holders(parsed.value)
      .map((holder) => holder.serviceKey)
      .sort();
  }

  /** Counts for the IPAddressPool status; a shared address counts once. */
  poolCounts(poolName: string): PoolCounts | undefined {
    const pool = this.poolsByName.get(poolName);
    if (!pool) return undefined;
    const assigned = (family: IPFamily): bigint => {
      let count = 0n;
      for (const value of this.book.values(family)) if (poolContains(pool, { family, value })) count++;
      return count;
    };
    const assignedIPv4 = assigned("IPv4");
    const assignedIPv6 = assigned("IPv6");
    return {
      pool: pool.name,
      assignedIPv4,
      assignedIPv6,
      availableIPv4: poolSize(pool, "IPv4") - assignedIPv4,
      availableIPv6: poolSize(pool, "IPv6") - assignedIPv6,
    };
  }

  allPoolCounts(): PoolCounts[] {
    return [...this.poolsByName.keys()].sort().flatMap((name) => this.poolCounts(name) ?? []);
  }

  private commit(holder: Holder, addresses: readonly IPAddress[]): void {
    const before = this.unhold(holder.serviceKey);
    const kept = (a: IPAddress) => addresses.some((b) => b.family === a.family && b.value === a.value);
    if (!before.every(kept)) this.firstMaybeFree.clear();
    if (addresses.length === 0) return;
    for (const address of addresses) this.book.add(address, holder);
    this.held.set(holder.serviceKey, { holder, addresses: [...addresses] });
  }

  private checkNamedPool(
    name: string,
    field: string | undefined,
    identity: ServiceIdentity,
  ): { ok: true; pool: Pool } | { ok: false; error: AllocationError } {
    const pool = this.poolsByName.get(name);
    if (!pool) return { ok: false, error: poolNotFound(name, field, [...this.poolsByName.keys()]) };
    if (!poolAllowsService(pool, identity)) {
      return { ok: false, error: notAllowed([pool], identity, field) };
    }
    return { ok: true, pool };
  }

  private pickForFamily(
    want: FamilyWant,
    attempt: Attempt,
  ): { address: IPAddress; pool: Pool } | { error: AllocationError } {
    if (want.requested) return this.checkRequested(want.requested, attempt);

    const existing = attempt.current?.addresses.find((address) => address.family === want.family);
    if (existing) {
      const pool = this.usablePoolFor(existing, attempt);
      if (pool && !this.book.conflictFor(existing, attempt.holder)) return { address: existing, pool };
    }

    const candidates = attempt.namedPool
      ? [attempt.namedPool]
      : this.pools.filter((pool) => pool.autoAssign && poolAllowsService(pool, attempt.identity));
    const withFamily = candidates.filter((pool) => poolFamilies(pool).includes(want.family));
    if (withFamily.length === 0) {
      // Say "not for you" rather than "no such family" when selectors are what stands in the way.
      const excluding = attempt.namedPool
        ? []
        : this.pools.filter((pool) => pool.autoAssign && poolFamilies(pool).includes(want.family));
      return {
        error:
          excluding.length > 0
            ? notAllowed(excluding, attempt.identity, undefined)
            : familyUnavailable(want.family, attempt.namedPool),
      };
    }

    const shared = this.findShareable(want.family, withFamily, attempt.holder);
    if (shared) return shared;

    // A Service holding nothing takes the first address free in pool order, which is never before where the
    // last such search found one: every address before that was held then, and still is unless one was freed.
    const fresh = attempt.current === undefined;
    for (const pool of withFamily) {
      const key = `${pool.name}\n${want.family}`;
      const start = fresh ? this.firstMaybeFree.get(key) : undefined;
      for (const at of poolPositions(pool, want.family, start)) {
        if (this.book.isFreeFor(want.family, at.value, attempt.holder.serviceKey)) {
          if (fresh) this.firstMaybeFree.set(key, at);
          return { address: ipFromValue(want.family, at.value), pool };
        }
      }
      if (fresh) this.firstMaybeFree.set(key, { range: pool.ranges.length, value: 0n });
    }
    return { error: poolExhausted(want.family, withFamily) };
  }

  /**
   * With a sharing key, an address already shared under that key (with no port clash) is preferred to
   * a fresh one: that is what users who set the same key on several Services mean.
   */
  private findShareable(
    family: IPFamily,
    pools: readonly Pool[],
    holder: Holder,
  ): { address: IPAddress; pool: Pool } | undefined {
    if (holder.sharingKey === undefined) return undefined;
    const values = [...this.book.values(family)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const pool of pools) {
      for (const value of values) {
        if (!poolContains(pool, { family, value })) continue;
        if (this.book.holders({ family, value }, holder.serviceKey).length === 0) continue;
        const address = ipFromValue(family, value);
        if (!this.book.conflictFor(address, holder)) return { address, pool };
      }
    }
    return undefined;
  }

  /** The address held for the family and given up, though the Service asked for no other: its clients' changes. */
  private givenUp(
    want: FamilyWant,
    attempt: Attempt,
    picked: { address: IPAddress } | { error: AllocationError },
  ): ReplacedAddress | undefined {
    const held = want.requested
      ? undefined
      : attempt.current?.addresses.find((a) => a.family === want.family);
    const by = "address" in picked ? picked.address : undefined;
    if (!held || held.value === by?.value) return undefined;
    const containing = this.pools.filter((pool) => poolContains(pool, held));
    const why = notKept(containing, attempt, this.book.conflictFor(held, attempt.holder));
    return { address: held.text, family: want.family, why, ...(by ? { by: by.text } : {}) };
  }

  /** The most preferred pool containing the address that this Service may use (and that the request allows). */
  private usablePoolFor(address: IPAddress, attempt: Attempt): Pool | undefined {
    if (attempt.namedPool) return poolContains(attempt.namedPool, address) ? attempt.namedPool : undefined;
    return this.pools.find(
      (pool) => poolContains(pool, address) && poolAllowsService(pool, attempt.identity),
    );
  }

  private checkRequested(
    address: IPAddress,
    attempt: Attempt,
  ): { address: IPAddress; pool: Pool } | { error: AllocationError } {
    const field = attempt.request.addressesField ?? "spec.loadBalancerIP";
    const containing = this.pools.filter((pool) => poolContains(pool, address));
    const [mostPreferred] = containing;
    if (!mostPreferred) return { error: notInAnyPool(address, field, this.pools) };
    const named = attempt.namedPool;
    if (named && !poolContains(named, address)) {
      return { error: outsideNamedPool(address, field, containing, named, attempt.request.poolField) };
    }
    const pool = this.usablePoolFor(address, attempt);
    if (!pool) return { error: notAllowed([mostPreferred], attempt.identity, field) };
    const conflict = this.book.conflictFor(address, attempt.holder, field);
    return conflict ? { error: conflict } : { address, pool };
  }
}

function sameHolder(a: Holder | undefined, b: Holder): boolean {
  if (!a || a.sharingKey !== b.sharingKey || a.backend !== b.backend || a.ports.length !== b.ports.length)
    return false;
  return a.ports.every(
    (port, index) => port.protocol === b.ports[index]?.protocol && port.port === b.ports[index]?.port,
  );
}
