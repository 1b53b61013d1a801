// The vocabulary shared by the allocator, the request parser and the controller: what a Service looks
// like to the allocator, what it asks for, what it holds, and every way an allocation can fail.
import type { IPFamily } from "./address.ts";
import type { Labels } from "./labelSelector.ts";

export type IPFamilyPolicy = "SingleStack" | "PreferDualStack" | "RequireDualStack";

export interface ServicePort {
  /** TCP, UDP or SCTP, as in the Service spec. */
  readonly protocol: string;
  readonly port: number;
}

export interface ServiceForAllocation {
  /** "namespace/name". */
  readonly key: string;
  /** Labels of the Service's namespace, for serviceAllocation.namespaceSelectors. */
  readonly namespaceLabels?: Labels;
  readonly labels?: Labels;
  readonly ports: readonly ServicePort[];
  /** spec.ipFamilies; the first is the primary family. */
  readonly ipFamilies?: readonly IPFamily[];
  readonly ipFamilyPolicy?: IPFamilyPolicy;
  /** Which pods receive the traffic, for sharing an address (sharingBackend). */
  readonly backend?: string;
}

export interface AllocationRequest {
  /** Requested addresses, at most one per family. */
  readonly addresses?: readonly string[];
  /** Where the addresses came from, named in error messages (e.g. "spec.loadBalancerIP"). */
  readonly addressesField?: string;
  readonly pool?: string;
  readonly poolField?: string;
  /** Services with the same sharing key may share an address when their ports do not clash. */
  readonly sharingKey?: string;
  readonly sharingKeyField?: string;
}

/** What a Service holds; the controller reads this back from Service status after a restart. */
export interface Assignment {
  readonly serviceKey: string;
  /** Canonical address text, primary family first. */
  readonly addresses: readonly string[];
  readonly sharingKey?: string;
  readonly ports: readonly ServicePort[];
  /** Which pods receive the traffic (sharingBackend); absent: any node may forward it (Cluster). */
  readonly backend?: string;
  /**
   * Read from the status of a Service this controller serves but has not addressed yet (MetalLB's, or set by
   * hand): kept only where it is inside a pool and free, unlike the controller's own allocations.
   */
  readonly inherited?: boolean;
}

export interface AssignedAddress {
  readonly address: string;
  readonly family: IPFamily;
  /** The most preferred pool holding the address that the Service may use. */
  readonly pool: string;
}

interface ErrorBase {
  /** The Service or request field to look at, when one is to blame. */
  readonly field?: string;
  /** A sentence for Events and conditions: what is wrong and how to fix it. */
  readonly message: string;
}

export type AllocationError =
  | (ErrorBase & {
      readonly reason: "PoolExhausted";
      readonly family: IPFamily;
      readonly pools: readonly string[];
    })
  | (ErrorBase & {
      readonly reason: "AddressInUse";
      readonly address: string;
      readonly usedBy: readonly string[];
    })
  | (ErrorBase & { readonly reason: "AddressNotInAnyPool"; readonly address: string })
  | (ErrorBase & { readonly reason: "PoolNotFound"; readonly pool: string })
  | (ErrorBase & { readonly reason: "PoolDoesNotAllowService"; readonly pool: string })
  | (ErrorBase & {
      readonly reason: "SharingKeyMismatch";
      readonly address: string;
      readonly usedBy: readonly string[];
      readonly theirSharingKey: string;
    })
  | (ErrorBase & {
      readonly reason: "PortConflict";
      readonly address: string;
      readonly port: ServicePort;
      readonly usedBy: string;
    })
  | (ErrorBase & {
      readonly reason: "BackendMismatch";
      readonly address: string;
      readonly usedBy: string;
    })
  | (ErrorBase & { readonly reason: "FamilyUnavailable"; readonly family: IPFamily })
  | (ErrorBase & { readonly reason: "InvalidRequestedAddress"; readonly address: string })
  | (ErrorBase & { readonly reason: "ConflictingAnnotations"; readonly fields: readonly string[] });

export type AllocationReason = AllocationError["reason"];

/** A family PreferDualStack would have liked but could not get; the Service still gets the other. */
export interface SkippedFamily {
  readonly family: IPFamily;
  readonly error: AllocationError;
}

/**
 * An address the Service held and could not keep, though it asked for no other (its pool was edited, or no longer
 * serves it): the address its clients use changes, which the user is warned of.
 */
export interface ReplacedAddress {
  readonly address: string;
  readonly family: IPFamily;
  /** Why it could not be kept, to follow the address: "is no longer in any IPAddressPool". */
  readonly why: string;
  /** The address the Service has instead; absent when it has none of this family now. */
  readonly by?: string;
}

export type AssignResult =
  | {
      readonly ok: true;
      readonly addresses: readonly AssignedAddress[];
      /** False when the Service already held exactly these addresses. */
      readonly changed: boolean;
      readonly skipped: readonly SkippedFamily[];
      readonly replaced: readonly ReplacedAddress[];
    }
  | { readonly ok: false; readonly error: AllocationError };

export interface PoolCounts {
  readonly pool: string;
  readonly assignedIPv4: bigint;
  readonly assignedIPv6: bigint;
  readonly availableIPv4: bigint;
  readonly availableIPv6: bigint;
}

/** An assignment read back after a restart that could not be honoured as written. */
export interface RestoreProblem {
  readonly serviceKey: string;
  readonly address: string;
  readonly error: AllocationError;
}

export function namespaceOf(serviceKey: string): string {
  const slash = serviceKey.indexOf("/");
  return slash < 0 ? "" : serviceKey.slice(0, slash);
}

export function formatPort(port: ServicePort): string {
  return `${port.protocol}/${port.port}`;
}

/**
 * What Services sharing an address must agree on, as MetalLB requires: one node announces a shared address (in L2
 * mode), so with externalTrafficPolicy Local, where only that node's own endpoints answer, every Service on it must
 * send to the same pods (the same spec.selector); with Cluster any node forwards anywhere. "" for Cluster.
 */
export function sharingBackend(
  policy: "Cluster" | "Local",
  selector: Readonly<Record<string, string>> | undefined,
): string {
  if (policy !== "Local") return "";
  const pairs = Object.entries(selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .sort();
  return `Local:${pairs.join(",")}`;
}
