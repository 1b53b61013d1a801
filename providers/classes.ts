// The load-balancer classes Portico serves, one per provider, and which Services a controller of a class serves
// and how it remembers the ones it took on. Kept apart from the providers so that naming a class (flags,
// porticoctl) does not load any cloud SDK.
import type { V1Service } from "@kubernetes/client-node";
import { PORTICO_ANNOTATIONS } from "./annotationKeys/portico.ts";
export const AWS_LOAD_BALANCER_CLASS = "portico.io/aws-nlb";
export const AZURE_LOAD_BALANCER_CLASS = "portico.io/azure-lb";
export const METAL_LOAD_BALANCER_CLASS = "portico.io/metal";
/** The AWS Load Balancer Controller's NLB class, served by an AWS controller told to take over from it. */
export const LBC_NLB_CLASS = "service.k8s.aws/nlb";

export const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";
/**
 * Written with the finalizer: the class under which Portico took the Service on. The finalizer's name is
 * shared with other load-balancer controllers, so this is how Portico knows the finalizer is its own to
 * remove, even after the Service changed type or class.
 */
export const MANAGED_BY_ANNOTATION = PORTICO_ANNOTATIONS.managedBy;

export interface ClassConfig {
  /** This controller's class, e.g. `portico.io/aws-nlb`. */
  loadBalancerClass: string;
  /** Also serve LoadBalancer Services without a class (Portico is the cluster's default implementation). */
  defaultForUnclassed: boolean;
  /** Other classes served beside its own (the AWS Load Balancer Controller's, when taking over from it). */
  alsoServes?: readonly string[];
}

/** Every class this controller serves: its own first. */
export function servedClasses(cfg: ClassConfig): string[] {
  return [cfg.loadBalancerClass, ...(cfg.alsoServes ?? [])];
}

/** The class a Service is served under by this controller: its own, or this controller's for an unclassed one. */
export function classServedUnder(svc: V1Service, cfg: ClassConfig): string {
  return svc.spec?.loadBalancerClass ?? cfg.loadBalancerClass;
}

const LBC_TYPE_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-type";
/** The type annotation's values the AWS Load Balancer Controller serves ("nlb" is the in-tree provider's). */
const LBC_TYPES = ["external", "nlb-ip"];

/** The Service should have a load balancer from this controller now. */
export function wantsLoadBalancer(svc: V1Service, cfg: ClassConfig): boolean {
  if (svc.spec?.type !== "LoadBalancer" || svc.metadata?.deletionTimestamp) return false;
  const cls = svc.spec.loadBalancerClass;
  const served = servedClasses(cfg);
  if (cls) return served.includes(cls);
  if (cfg.defaultForUnclassed) return true;
  const type = svc.metadata?.annotations?.[LBC_TYPE_ANNOTATION]?.trim();
  return served.includes(LBC_NLB_CLASS) && type !== undefined && LBC_TYPES.includes(type);
}

/** This controller took the Service on at some point and may still hold cloud resources and the finalizer. */
export function tookOn(svc: V1Service, cfg: ClassConfig): boolean {
  const by = svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION];
  return by !== undefined && servedClasses(cfg).includes(by);
}

export function hasFinalizer(svc: V1Service): boolean {
  return svc.metadata?.finalizers?.includes(FINALIZER) ?? false;
}
