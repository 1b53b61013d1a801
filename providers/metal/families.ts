// Which address families a Service gets, from its ipFamilies/ipFamilyPolicy and any requested addresses.
// Kept apart from the allocator because the rules are Kubernetes', not the pools'.
import { otherFamily, parseIP, type IPAddress, type IPFamily } from "../../shared/address.ts";
import type {
  AllocationError,
  AllocationRequest,
  ServiceForAllocation,
} from "../../shared/allocationTypes.ts";

export interface FamilyWant {
  readonly family: IPFamily;
  /** False only for PreferDualStack's second family: the Service is fine without it. */
  readonly required: boolean;
  readonly requested?: IPAddress;
}

export type FamilyPlan = { ok: true; wants: FamilyWant[] } | { ok: false; error: AllocationError };

const DEFAULT_ADDRESSES_FIELD = "spec.loadBalancerIP";

export function planFamilies(service: ServiceForAllocation, request: AllocationRequest): FamilyPlan {
  const field = request.addressesField ?? DEFAULT_ADDRESSES_FIELD;
  const requested: IPAddress[] = [];
  for (const text of request.addresses ?? []) {
    const parsed = parseIP(text.trim());
    if (!parsed.ok) return invalid(text, field, parsed.problem);
    const duplicate = requested.find((earlier) => earlier.family === parsed.value.family);
    if (duplicate) {
      return invalid(
        text,
        field,
        `two ${parsed.value.family} addresses (${duplicate.text}, ${parsed.value.text}), but a Service gets ` +
          `at most one address per family; keep one of them`,
      );
    }
    requested.push(parsed.value);
  }

  const policy = service.ipFamilyPolicy ?? "SingleStack";
  const declared = service.ipFamilies && service.ipFamilies.length > 0 ? service.ipFamilies : undefined;
  const primary: IPFamily = declared?.[0] ?? requested[0]?.family ?? "IPv4";
  const allowed: IPFamily[] =
    policy === "SingleStack"
      ? [primary]
      : policy === "RequireDualStack"
        ? [primary, otherFamily(primary)]
        : (declared ?? [primary]).slice(0, 2);

  for (const address of requested) {
    if (!allowed.includes(address.family)) {
      return invalid(
        address.text,
        field,
        `${address.text} is an ${address.family} address, but the Service's families are ` +
          `${allowed.join(", ")} (ipFamilyPolicy ${policy}); request an ${allowed.join(" or ")} address ` +
          `or change spec.ipFamilies`,
      );
    }
  }

  if (requested.length > 0) {
    if (policy === "RequireDualStack" && requested.length < 2) {
      const missing = otherFamily(requested[0]?.family ?? primary);
      return invalid(
        requested[0]?.text ?? "",
        field,
        `no ${missing} address, but the Service requires dual-stack (ipFamilyPolicy RequireDualStack); ` +
          `add one ${missing} address (comma-separated) or remove the requested addresses`,
      );
    }
    // Requested addresses decide the families; order them primary first as Kubernetes lists ingress.
    const wants = allowed.flatMap((family) => {
      const address = requested.find((each) => each.family === family);
      return address ? [{ family, required: true, requested: address }] : [];
    });
    return { ok: true, wants };
  }

  return {
    ok: true,
    wants: allowed.map((family, index) => ({
      family,
      required: policy !== "PreferDualStack" || index === 0,
    })),
  };
}

/** `message` does not name `field`: it is put before the message where the error is told (refusalText). */
function invalid(address: string, field: string, message: string): FamilyPlan {
  return { ok: false, error: { reason: "InvalidRequestedAddress", address, field, message } };
}
