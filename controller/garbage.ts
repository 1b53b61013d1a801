// Orphan collection: cloud resources tagged for this cluster whose Service no longer exists (deleted while
// the controller was down, or its finalizer removed by hand) are deleted. A Service is confirmed gone with a
// live read from the apiserver, never judged from a cache that might be behind.
import type { CoreV1Api } from "@kubernetes/client-node";
import type { LoadBalancerProvider, ServiceRef } from "../providers/provider.ts";
import type { Logger } from "../shared/log.ts";

export async function collectOrphans(opts: {
  provider: LoadBalancerProvider;
  core: CoreV1Api;
  log: Logger;
  /** Only Services in this namespace are in view (a namespaced controller). */
  namespace?: string;
}): Promise<{ deleted: ServiceRef[]; owning: ServiceRef[] }> {
  const owned = await opts.provider.ownedServices();
  const deleted: ServiceRef[] = [];
  const owning: ServiceRef[] = [];
  for (const ref of owned) {
    if ((opts.namespace && ref.namespace !== opts.namespace) || (await stillExists(opts.core, ref))) {
      owning.push(ref);
      continue;
    }
    opts.log.info(
      { service: `${ref.namespace}/${ref.name}`, uid: ref.uid },
      "deleting cloud resources of a Service that no longer exists",
    );
    await opts.provider.delete(ref);
    deleted.push(ref);
  }
  // What still owns cloud resources, for the provider's settle (read once per pass, not twice).
  return { deleted, owning };
}

async function stillExists(core: CoreV1Api, ref: ServiceRef): Promise<boolean> {
  try {
    const svc = await core.readNamespacedService({ name: ref.name, namespace: ref.namespace });
    // Same name, new object: the old Service's resources are orphans.
    return svc.metadata?.uid === ref.uid;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
}
