// Which Services are Portico's and which provider serves a class: names only, so that asking does not load
// any cloud SDK.
import type { V1Service } from "@kubernetes/client-node";
import {
  AWS_LOAD_BALANCER_CLASS,
  AZURE_LOAD_BALANCER_CLASS,
  METAL_LOAD_BALANCER_CLASS,
} from "../../providers/classes.ts";
import { MANAGED_BY_ANNOTATION } from "../classes.ts";

export const PORTICO_CLASSES: Record<string, string> = {
  [AWS_LOAD_BALANCER_CLASS]: "aws",
  [AZURE_LOAD_BALANCER_CLASS]: "azure",
  [METAL_LOAD_BALANCER_CLASS]: "metal",
};

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
