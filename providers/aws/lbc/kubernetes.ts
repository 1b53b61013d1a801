// The Kubernetes side of taking over from the AWS Load Balancer Controller (LBC): whether LBC still runs, told by
// its leader-election Lease, and LBC's finalizer on a Service, removed once Portico owns everything LBC made for
// it. The AWS provider decides when (providers/aws/lbc/takeOver.ts); these only read and write Kubernetes.
import type { CoordinationV1Api, CoreV1Api, V1Lease } from "@kubernetes/client-node";
import { LBC_FINALIZER } from "./adoption.ts";
import type { ServiceRef } from "../../provider.ts";
import type { ClusterView } from "../../cluster.ts";
import { FINALIZER } from "../../classes.ts";
import { mergePatch } from "../../../shared/patch.ts";

export interface LeaseRef {
  namespace: string;
  name: string;
}

/** How long one reading of LBC's Lease stands for every Service (one read, not one per Service and pass). */
const LEASE_READ_TTL_MS = 5_000;

/**
 * Who holds the Lease, when it was renewed within twice its duration (a holder that stopped renewing loses it
 * once the duration has passed; the second duration allows for the holder's clock being behind ours: better to
 * wait a little longer than to take over from a controller that still runs); undefined when nobody does.
 */
export function liveHolder(lease: V1Lease | undefined, now: number): string | undefined {
  const holder = lease?.spec?.holderIdentity;
  const renewed = lease?.spec?.renewTime ?? lease?.spec?.acquireTime;
  if (!holder || !renewed) return undefined;
  const age = now - new Date(String(renewed)).getTime();
  const durationMs = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
  return age < 2 * durationMs
    ? `${holder} (renewed ${Math.max(0, Math.round(age / 1000))} s ago)`
    : undefined;
}

/** Reads LBC's Lease (at most every few seconds) and says who runs LBC now; throws when the Lease cannot be read. */
export function lbcLeaseReader(
  coordination: CoordinationV1Api,
  lease: LeaseRef,
  now: () => number = Date.now,
): () => Promise<string | undefined> {
  let last: { at: number; holder: Promise<string | undefined> } | undefined;
  return () => {
    if (last && now() - last.at < LEASE_READ_TTL_MS) return last.holder;
    const holder = coordination.readNamespacedLease(lease).then(
      (l) => liveHolder(l, now()),
      (err: { code?: number; message?: string }) => {
        if (err.code === 404) return undefined;
        throw new Error(
          `cannot read the AWS Load Balancer Controller's Lease ${lease.namespace}/${lease.name} to tell whether it still runs (${err.message ?? err.code}): allow the controller to get leases there`,
        );
      },
    );
    last = { at: now(), holder };
    holder.catch(() => (last = undefined));
    return holder;
  };
}

/**
 * Removes LBC's finalizer from the Service (keeping Portico's), guarded by the resourceVersion just read; true
 * when it did. The cache says first whether there is anything to do, so a pass costs no read when not.
 */
export function lbcFinalizerReleaser(
  core: CoreV1Api,
  cache: Required<Pick<ClusterView, "service">>,
): (service: ServiceRef) => Promise<boolean> {
  return async (service) => {
    const cached = cache.service(`${service.namespace}/${service.name}`);
    if (cached?.metadata?.uid !== service.uid || !cached.metadata.finalizers?.includes(LBC_FINALIZER))
      return false;
    const svc = await core.readNamespacedService({ namespace: service.namespace, name: service.name });
    const finalizers = svc.metadata?.finalizers ?? [];
    if (svc.metadata?.uid !== service.uid || !finalizers.includes(LBC_FINALIZER)) return false;
    await core.patchNamespacedService(
      {
        namespace: service.namespace,
        name: service.name,
        body: {
          metadata: {
            resourceVersion: svc.metadata.resourceVersion,
            finalizers: [...finalizers.filter((f) => f !== LBC_FINALIZER && f !== FINALIZER), FINALIZER],
          },
        },
      },
      mergePatch,
    );
    return true;
  };
}
