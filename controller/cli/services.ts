// What porticoctl needs to know about Services: which are Portico's, and which provider serves a class.
import type { V1Service } from "@kubernetes/client-node";
import { AWS_LOAD_BALANCER_CLASS, AwsProvider } from "../../providers/aws/provider.ts";
import { METAL_LOAD_BALANCER_CLASS } from "../../providers/metal/provider.ts";
import type { LoadBalancerProvider } from "../../providers/provider.ts";
import { MANAGED_BY_ANNOTATION } from "../classes.ts";

export const PORTICO_CLASSES: Record<string, string> = {
  [AWS_LOAD_BALANCER_CLASS]: "aws",
  "portico.io/azure-lb": "azure",
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

/**
 * A read-only provider for looking at the cloud. AWS needs no more than the standard credential chain;
 * other providers show only what Kubernetes knows.
 */
export function inspectorFor(cls: string | undefined, clusterName: string): LoadBalancerProvider | undefined {
  if (cls === AWS_LOAD_BALANCER_CLASS) return new AwsProvider({ clusterName, maxAttempts: 3 });
  return undefined;
}

export function key(svc: V1Service): string {
  return `${svc.metadata?.namespace}/${svc.metadata?.name}`;
}
