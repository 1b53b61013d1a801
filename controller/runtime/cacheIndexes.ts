// Views of the cache that every reconcile reads, kept ready rather than computed for each reconcile: at thousands
// of Services, copying the Node list and filtering every EndpointSlice of the namespace once per reconcile was a
// large part of what a reconcile cost (make bench-memory's CPU profile).
import type { V1EndpointSlice } from "@kubernetes/client-node";

/**
 * A list-watch's objects as one array: the same (frozen) array until one of them changes, so what is derived
 * from it can be kept for as long as it is the same array.
 */
export class StableList<T> {
  private readonly read: () => readonly T[];
  private current: readonly T[] | undefined;

  constructor(read: () => readonly T[]) {
    this.read = read;
  }

  list(): readonly T[] {
    return (this.current ??= Object.freeze([...this.read()]));
  }

  /** One of the objects was added, changed or deleted. */
  changed(): void {
    this.current = undefined;
  }
}

const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** EndpointSlices by the Service they belong to (their kubernetes.io/service-name label). */
export class SliceIndex {
  /** "namespace/service" → slices by "namespace/slice name", in the order they arrived. */
  private readonly byService = new Map<string, Map<string, V1EndpointSlice>>();
  /** "namespace/slice name" → "namespace/service". */
  private readonly serviceOf = new Map<string, string>();

  put(slice: V1EndpointSlice): void {
    const key = keyOf(slice);
    const label = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    const service = label === undefined ? undefined : `${slice.metadata?.namespace}/${label}`;
    if (this.serviceOf.get(key) !== service) this.remove(slice);
    if (service === undefined) return;
    let slices = this.byService.get(service);
    if (!slices) this.byService.set(service, (slices = new Map<string, V1EndpointSlice>()));
    slices.set(key, slice);
    this.serviceOf.set(key, service);
  }

  remove(slice: V1EndpointSlice): void {
    const key = keyOf(slice);
    const service = this.serviceOf.get(key);
    if (service === undefined) return;
    this.serviceOf.delete(key);
    const slices = this.byService.get(service)!;
    slices.delete(key);
    if (slices.size === 0) this.byService.delete(service);
  }

  slicesFor(namespace: string, service: string): V1EndpointSlice[] {
    return [...(this.byService.get(`${namespace}/${service}`)?.values() ?? [])];
  }
}

const keyOf = (obj: V1EndpointSlice) => `${obj.metadata?.namespace}/${obj.metadata?.name}`;
