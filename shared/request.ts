// Reads what a Service asks of the allocator from its spec and annotations. MetalLB's annotations are
// honoured (current metallb.io/ and legacy metallb.universe.tf/ prefixes) so Services move over unchanged;
// Portico's own use the portico.io/ prefix. Two sources that disagree are an error, never a silent pick.
import type { AllocationError, AllocationRequest } from "./allocationTypes.ts";

const PREFIXES = ["portico.io", "metallb.io", "metallb.universe.tf"] as const;

export const ADDRESSES_ANNOTATIONS = PREFIXES.map((prefix) => `${prefix}/loadBalancerIPs`);
export const POOL_ANNOTATIONS = PREFIXES.map((prefix) => `${prefix}/address-pool`);
export const SHARING_ANNOTATIONS = PREFIXES.map((prefix) => `${prefix}/allow-shared-ip`);
/** Where the controller records the pool an address came from (providers/metal/traffic.ts poolRecord). */
export const POOL_RECORD_ANNOTATION = "portico.io/ip-allocated-from-pool";
/** MetalLB's spelling of that record, read (never written) on Services MetalLB addressed. */
export const METALLB_POOL_RECORD_ANNOTATION = "metallb.io/ip-allocated-from-pool";

export interface ServiceRequestSource {
  /** spec.loadBalancerIP (deprecated in Kubernetes but still widely used). */
  readonly loadBalancerIP?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

export type RequestResult = { ok: true; request: AllocationRequest } | { ok: false; error: AllocationError };

interface Found {
  readonly field: string;
  readonly value: string;
}

export function requestFromService(source: ServiceRequestSource): RequestResult {
  const annotations = source.annotations ?? {};
  const addressSources: Found[] = [];
  const loadBalancerIP = source.loadBalancerIP?.trim();
  if (loadBalancerIP) addressSources.push({ field: "spec.loadBalancerIP", value: loadBalancerIP });
  addressSources.push(...findAnnotations(annotations, ADDRESSES_ANNOTATIONS));

  const addresses = agree(addressSources, (value) => splitList(value).join(","));
  if (!addresses.ok) return addresses;
  const pool = agree(findAnnotations(annotations, POOL_ANNOTATIONS), (value) => value);
  if (!pool.ok) return pool;
  const sharing = agree(findAnnotations(annotations, SHARING_ANNOTATIONS), (value) => value);
  if (!sharing.ok) return sharing;

  const request: {
    -readonly [K in keyof AllocationRequest]: AllocationRequest[K];
  } = {};
  if (addresses.found) {
    request.addresses = splitList(addresses.found.value);
    request.addressesField = describe(addresses.found.field);
  }
  if (pool.found) {
    request.pool = pool.found.value;
    request.poolField = describe(pool.found.field);
  }
  if (sharing.found) {
    request.sharingKey = sharing.found.value;
    request.sharingKeyField = describe(sharing.found.field);
  }
  return { ok: true, request };
}

function findAnnotations(annotations: Readonly<Record<string, string>>, keys: readonly string[]): Found[] {
  return keys.flatMap((key) => {
    const value = annotations[key]?.trim();
    return value ? [{ field: key, value }] : [];
  });
}

/** The single value all sources agree on (compared after `normalize`), or an error naming them all. */
function agree(
  sources: readonly Found[],
  normalize: (value: string) => string,
): { ok: true; found: Found | undefined } | { ok: false; error: AllocationError } {
  const [first] = sources;
  if (!first) return { ok: true, found: undefined };
  const differing = sources.filter((source) => normalize(source.value) !== normalize(first.value));
  if (differing.length === 0) return { ok: true, found: first };
  const fields = sources.map((source) => describe(source.field));
  const listed = sources.map((source) => `${describe(source.field)}="${source.value}"`).join(", ");
  return {
    ok: false,
    error: {
      reason: "ConflictingAnnotations",
      fields,
      message: `the Service asks for different things in ${listed}; keep one of them or make them equal`,
    },
  };
}

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function describe(field: string): string {
  return field.startsWith("spec.") ? field : `metadata.annotations["${field}"]`;
}
