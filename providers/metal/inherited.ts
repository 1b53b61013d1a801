// Addresses a Service already has when this controller first serves it: given by MetalLB, or written by hand.
// Moving over must not renumber anything, so such an address is taken on as if the Service had requested it,
// when it is inside one of the pools and free; otherwise the Service is refused, saying why, and its status is
// left as it is: Portico never changes an address unasked. Pure: decides on an allocator and the status read.
import { ConfigurationError } from "../errors.ts";
import { parseIP } from "../../shared/address.ts";
import type {
  AllocationRequest,
  RestoreProblem,
  ServiceForAllocation,
} from "../../shared/allocationTypes.ts";
import type { Allocator } from "./allocator.ts";
import { refusalText } from "./allocationErrors.ts";
import { describeHolder } from "./holders.ts";

/** Reasons of the refusals below; the inventory reads them back to know the Service's status is not Portico's. */
export const INHERITED_REFUSALS = [
  "StatusAddressNotInPool",
  "StatusAddressTaken",
  "StatusAddressNotAllowed",
] as const;

export const STATUS_FIELD = "status.loadBalancer.ingress";

export type Inheritance =
  /** Nothing to take on: the allocator holds the Service's status already, it has none, or it asks for others. */
  { kind: "none" } | { kind: "kept"; addresses: string[] } | { kind: "refused"; error: ConfigurationError };

/**
 * Takes the Service's status addresses on in `allocator` when it holds nothing for the Service yet. An explicit
 * request (spec.loadBalancerIP, an addresses annotation) wins over the status: that is how a user asks for a
 * change of address.
 */
export function inherit(
  allocator: Allocator,
  service: ServiceForAllocation,
  request: AllocationRequest,
  status: readonly string[],
): Inheritance {
  const addresses = status.flatMap((text) => {
    const parsed = parseIP(text);
    return parsed.ok ? [parsed.value.text] : [];
  });
  if (!addresses.length || request.addresses?.length) return { kind: "none" };
  if (allocator.addressesOf(service.key).length) return { kind: "none" };
  const problems = allocator.adopt({
    serviceKey: service.key,
    addresses,
    ...(request.sharingKey?.trim() ? { sharingKey: request.sharingKey.trim() } : {}),
    ports: service.ports.map((p) => ({ protocol: p.protocol, port: p.port })),
    ...(service.backend ? { backend: service.backend } : {}),
  });
  if (problems.length) return { kind: "refused", error: refusal(problems) };
  // As if requested: the pool it is in must also serve the Service (selectors, a named pool), or the allocator
  // would hand it another address.
  const check = allocator.assign(service, request);
  const given = check.ok ? check.addresses.map((a) => a.address) : [];
  if (check.ok && addresses.every((a) => given.includes(a))) return { kind: "kept", addresses };
  allocator.release(service.key);
  const why = check.ok
    ? `Portico would give it ${given.join(", ") || "no address"}`
    : refusalText(check.error);
  return {
    kind: "refused",
    error: new ConfigurationError(
      "StatusAddressNotAllowed",
      STATUS_FIELD,
      `${addresses.join(", ")} in the Service's status (from MetalLB or set by hand) is in a pool that does not serve this Service (${why}); Portico leaves the address as it is and does not announce it, rather than give the Service another one unasked`,
      "let the pool serve the Service (serviceAllocation, the address-pool annotation), or ask for another address with spec.loadBalancerIP or the metallb.io/loadBalancerIPs annotation (the address then changes)",
    ),
  };
}

function refusal(problems: RestoreProblem[]): ConfigurationError {
  const outside = problems.filter((p) => p.error.reason === "AddressNotInAnyPool");
  const taken = problems.filter((p) => p.error.reason !== "AddressNotInAnyPool");
  const what = taken.length
    ? `${taken.map((p) => p.address).join(", ")} in the Service's status (from MetalLB or set by hand) cannot be kept: ${taken
        .map((p) => heldBy(p))
        .join("; ")}`
    : `${outside.map((p) => p.address).join(", ")} in the Service's status (from MetalLB or set by hand) is in none of Portico's IPAddressPools`;
  return new ConfigurationError(
    taken.length ? "StatusAddressTaken" : "StatusAddressNotInPool",
    STATUS_FIELD,
    `${what}; Portico leaves the address as it is and does not announce it, rather than give the Service another one unasked`,
    taken.length
      ? "free it from the other holder, or ask for another address with spec.loadBalancerIP or the metallb.io/loadBalancerIPs annotation (the address then changes)"
      : "add it to an IPAddressPool to keep it, or ask for another address with spec.loadBalancerIP or the metallb.io/loadBalancerIPs annotation (the address then changes)",
  );
}

function heldBy(problem: RestoreProblem): string {
  const usedBy = "usedBy" in problem.error ? [problem.error.usedBy].flat() : [];
  const users = usedBy.map(describeHolder);
  return `${problem.address} is ${users.join(", ") || problem.error.message}`;
}
