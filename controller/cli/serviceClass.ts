// Which Services are Portico's and which provider serves a class: names only, so that asking does not load
// any cloud SDK.
import type { V1Service } from "@kubernetes/client-node";
import {
  MANAGED_BY_ANNOTATION,
  AWS_LOAD_BALANCER_CLASS,
  AZURE_LOAD_BALANCER_CLASS,
  LBC_NLB_CLASS,
  METAL_LOAD_BALANCER_CLASS,
} from "../../providers/classes.ts";

export const PORTICO_CLASSES: Record<string, string> = {
  [AWS_LOAD_BALANCER_CLASS]: "aws",
  [AZURE_LOAD_BALANCER_CLASS]: "azure",
  [METAL_LOAD_BALANCER_CLASS]: "metal",
};

/**
 * The provider serving a class: Portico's own classes, and the AWS Load Balancer Controller's when Portico took
 * the Service on under it (`--aws-take-over-lbc`); undefined for another controller's class.
 */
export function providerOf(svc: V1Service): string | undefined {
  const cls = classOf(svc);
  if (!cls) return undefined;
  const tookOver = cls === LBC_NLB_CLASS && svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === cls;
  return PORTICO_CLASSES[cls] ?? (tookOver ? "aws" : undefined);
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
