// The Portico controllers running in the cluster, found from their leader Leases, and the settings the leader
// of each publishes there (controller/publishedSettings.ts): what porticoctl needs to look where the
// controller looks, without flags.
import type { CoordinationV1Api, V1Lease, V1Service } from "@kubernetes/client-node";
import { readSettings, SETTINGS_ANNOTATION, type PublishedSettings } from "../publishedSettings.ts";
import type { ToolAccess } from "../../providers/registry.ts";
import { classOf } from "./serviceClass.ts";

export interface RunningController {
  lease: V1Lease;
  /** Renewed within twice its duration: a leader is alive. */
  fresh: boolean;
  settings?: PublishedSettings;
}

export const LEASE_PREFIX = "portico-controller";

/**
 * Every namespace's Portico Leases when the user may list them all; otherwise those of `controllerNamespace`
 * (the default install's), which is as far as a namespaced user can see.
 */
export async function runningControllers(
  coordination: CoordinationV1Api,
  controllerNamespace: string,
  now = Date.now(),
): Promise<RunningController[]> {
  const leases = await coordination
    .listLeaseForAllNamespaces()
    .catch(() => coordination.listNamespacedLease({ namespace: controllerNamespace }))
    .catch(() => ({ items: [] as V1Lease[] }));
  return leases.items
    .filter((l) => l.metadata?.name?.startsWith(LEASE_PREFIX))
    .map((lease) => {
      const renewed = lease.spec?.renewTime ? new Date(String(lease.spec.renewTime)).getTime() : 0;
      const fresh =
        Boolean(lease.spec?.holderIdentity) &&
        now - renewed < (lease.spec?.leaseDurationSeconds ?? 15) * 2000;
      const settings = readSettings(lease);
      return { lease, fresh, ...(settings ? { settings } : {}) };
    });
}

/**
 * The running controller that serves the Service: same class (or the default one for an unclassed Service) and
 * the Service's namespace in its scope. A controller confined to the namespace wins over a cluster-wide one;
 * undefined when none is found or two equally good ones disagree.
 */
export function controllerFor(
  svc: V1Service,
  controllers: readonly RunningController[],
): RunningController | undefined {
  const cls = classOf(svc);
  const namespace = svc.metadata?.namespace;
  const serving = controllers.filter((c) => {
    const s = c.settings;
    if (!c.fresh || !s) return false;
    const classMatches = cls
      ? s.loadBalancerClass === cls || (s.alsoServes ?? []).includes(cls)
      : s.defaultForUnclassed;
    return classMatches && (!s.namespace || s.namespace === namespace);
  });
  const confined = serving.filter((c) => c.settings!.namespace === namespace);
  const best = confined.length ? confined : serving;
  const distinct = new Set(best.map((c) => c.lease.metadata?.annotations?.[SETTINGS_ANNOTATION]));
  return distinct.size === 1 ? best[0] : undefined;
}

/** What porticoctl knows of a Service's cloud: what the user gave it, and what the serving controller published. */
export function toolAccess(
  given: ToolAccess | undefined,
  settings: PublishedSettings | undefined,
): ToolAccess {
  return {
    ...(given?.given ? { given: given.given } : {}),
    ...(settings ? { published: { provider: settings.provider, settings: settings.settings } } : {}),
  };
}
