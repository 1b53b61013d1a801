// The sentences behind every allocation failure. Each names what is wrong, the field or object to look
// at, and the change that fixes it, because these messages become Events and conditions users act on.
// An error's `field` is put before its message in one place (refusalText, and ConfigurationError the same way),
// so a message never names its own field: it would read twice.
import { otherFamily, type IPAddress, type IPFamily } from "../../shared/address.ts";
import type { AllocationError, ReplacedAddress } from "../../shared/allocationTypes.ts";
import { poolAllowsService, poolCovers, type Pool, type ServiceIdentity } from "../../shared/pool.ts";
import { describeHolder } from "./holders.ts";

const withField = (field: string | undefined): { field?: string } => (field === undefined ? {} : { field });

/** The whole sentence a user reads: the field to look at, once, then what is wrong and the fix. */
export function refusalText(error: AllocationError): string {
  return error.field === undefined ? error.message : `${error.field}: ${error.message}`;
}

export function poolNotFound(
  name: string,
  field: string | undefined,
  known: readonly string[],
): AllocationError {
  const pools = [...known].sort().join(", ") || "none";
  const what = `IPAddressPool "${name}" does not exist (pools: ${pools})`;
  return {
    reason: "PoolNotFound",
    pool: name,
    ...withField(field),
    message:
      field === undefined
        ? `the address-pool annotation names ${what}; fix the name or create the pool`
        : `${what}; fix the name or create the pool`,
  };
}

export function poolExhausted(family: IPFamily, pools: readonly Pool[]): AllocationError {
  const names = pools.map((pool) => pool.name);
  return {
    reason: "PoolExhausted",
    family,
    pools: names,
    message:
      `no free ${family} address left in IPAddressPool ${names.join(", ")}; add addresses to a pool, ` +
      `free some by deleting LoadBalancer Services, or share an address (allow-shared-ip)`,
  };
}

export function outsideNamedPool(
  address: IPAddress,
  field: string,
  containing: readonly Pool[],
  named: Pool,
  poolField: string | undefined,
): AllocationError {
  return {
    reason: "InvalidRequestedAddress",
    address: address.text,
    field,
    message:
      `${address.text} is in IPAddressPool ${containing.map((p) => p.name).join(", ")}, ` +
      `but ${poolField ?? "the address-pool annotation"} names pool ${named.name}; ` +
      `make them agree or remove one of them`,
  };
}

export function notInAnyPool(
  address: IPAddress,
  field: string | undefined,
  pools: readonly Pool[],
): AllocationError {
  const skippedBy = pools.find((pool) => poolCovers(pool, address));
  const message = skippedBy
    ? `${address.text} is skipped by IPAddressPool ${skippedBy.name} because its avoidBuggyIPs is on ` +
      `(addresses ending in .0 or .255 are never used); request another address or turn avoidBuggyIPs off`
    : `${address.text} is not in any IPAddressPool; request an address from a pool or add it to a pool's spec.addresses`;
  return {
    reason: "AddressNotInAnyPool",
    address: address.text,
    ...withField(field),
    message,
  };
}

/** `pools` (most preferred first, at least one) all exclude the Service through serviceAllocation. */
export function notAllowed(
  pools: readonly Pool[],
  identity: ServiceIdentity,
  field: string | undefined,
): AllocationError {
  const names = pools.map((pool) => pool.name);
  const subject =
    names.length === 1 ? `IPAddressPool ${names[0]} does` : `IPAddressPools ${names.join(", ")} do`;
  return {
    reason: "PoolDoesNotAllowService",
    pool: names[0] ?? "",
    ...withField(field),
    message:
      `${subject} not serve Services in namespace ${identity.namespace} with these labels ` +
      `(spec.serviceAllocation namespaces/namespaceSelectors/serviceSelectors do not match); ` +
      `label the Service or namespace to match, or use another pool`,
  };
}

export function familyUnavailable(family: IPFamily, namedPool: Pool | undefined): AllocationError {
  const message = namedPool
    ? `IPAddressPool ${namedPool.name} has no ${family} addresses; add a ${family} range to it, ` +
      `name another pool, or set spec.ipFamilies/ipFamilyPolicy to ${otherFamily(family)} only`
    : `no auto-assigning IPAddressPool that serves this Service has ${family} addresses; add a ${family} range ` +
      `to a pool, name a pool with autoAssign off in the address-pool annotation, ` +
      `or change spec.ipFamilies/ipFamilyPolicy`;
  return { reason: "FamilyUnavailable", family, message };
}

/**
 * Why a Service cannot keep an address it holds, to follow the address ("192.0.2.5 is no longer in any
 * IPAddressPool"): the pools containing it (most preferred first), what the Service asks of them, and the clash
 * with the address's other holders, if any.
 */
export function notKept(
  containing: readonly Pool[],
  asked: { identity: ServiceIdentity; namedPool: Pool | undefined; request: { poolField?: string } },
  conflict: AllocationError | undefined,
): string {
  const named = asked.namedPool;
  if (containing.length === 0) return "is no longer in any IPAddressPool";
  if (named && !containing.includes(named))
    return `is not in IPAddressPool ${named.name}, which ${asked.request.poolField ?? "the address-pool annotation"} names`;
  if (!containing.some((pool) => poolAllowsService(pool, asked.identity)))
    return (
      `is in IPAddressPool ${containing.map((pool) => pool.name).join(", ")}, which does not serve this ` +
      `Service (its spec.serviceAllocation)`
    );
  const users = conflict && "usedBy" in conflict ? [conflict.usedBy].flat().map(describeHolder) : [];
  return `can no longer be shared: it is ${users.join(", ") || "held by another"} (${conflict?.reason ?? "conflict"})`;
}

/** The Warning for an address the Service lost without asking: whoever reaches the Service by it must change. */
export function addressChanged(replaced: ReplacedAddress): string {
  const { address, why, by, family } = replaced;
  return by
    ? `${address} ${why}, so the Service's address is now ${by}; point clients and DNS records at ${by} ` +
        `(a Service that asks for its address, with spec.loadBalancerIP or the metallb.io/loadBalancerIPs ` +
        `annotation, is refused instead of moved)`
    : `${address} ${why}, and no other ${family} address is free for the Service (see NoAddressOfFamily): ` +
        `clients that use ${address} must use its other address`;
}
