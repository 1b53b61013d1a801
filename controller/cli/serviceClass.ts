// Which Services are Portico's and which provider serves a class: names only, so that asking does not load
// any cloud SDK.
import type { V1Service } from "@kubernetes/client-node";
import { MANAGED_BY_ANNOTATION } from "../../providers/classes.ts";
import { DESCRIPTORS, providerForClass, providerOfOwnClass } from "../../providers/registry.ts";

/** Portico's own classes, each its provider's (providers/registry.ts). */
export const PORTICO_CLASSES: Record<string, string> = Object.fromEntries(
  DESCRIPTORS.map((d) => [d.loadBalancerClass, d.name]),
);

/**
 * The provider serving a class: Portico's own classes, and a class a provider takes over (the AWS Load Balancer
 * Controller's, `--aws-take-over-lbc`) once Portico took the Service on under it; undefined for another
 * controller's class.
 */
export function providerOf(svc: V1Service): string | undefined {
  const cls = classOf(svc);
  if (!cls) return undefined;
  const tookOver = svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === cls;
  return providerOfOwnClass(cls)?.name ?? (tookOver ? providerForClass(cls)?.name : undefined);
}

/** The class a Service is served under: the one Portico recorded when it took it on, else the spec's. */
export function classOf(svc: V1Service): string | undefined {
  return svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] ?? svc.spec?.loadBalancerClass;
}

export function isPortico(svc: V1Service): boolean {
  const cls = classOf(svc);
  return (
    svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] !== undefined ||
    (cls !== undefined && cls in PORTICO_CLASSES)
  );
}

export function key(svc: V1Service): string {
  return `${svc.metadata?.namespace}/${svc.metadata?.name}`;
}
