// Which Services this controller serves, and how it remembers which ones it took on.
import type { V1Service } from "@kubernetes/client-node";
import { LBC_NLB_CLASS } from "../providers/classes.ts";

export const FINALIZER = "service.kubernetes.io/load-balancer-cleanup";
/**
 * Written with the finalizer: the class under which Portico took the Service on. The finalizer's name is
 * shared with other load-balancer controllers, so this is how Portico knows the finalizer is its own to
 * remove, even after the Service changed type or class.
 */
export const MANAGED_BY_ANNOTATION = "portico.io/managed-by";

export interface ClassConfig {
  /** This controller's class, e.g. `portico.io/aws-nlb`. */
  loadBalancerClass: string;
  /** Also serve LoadBalancer Services without a class (Portico is the cluster's default implementation). */
  defaultForUnclassed: boolean;
}

/**
 * The AWS Load Balancer Controller's NLB class. A controller started to take over from it (`--aws-take-over-lbc`)
 * serves this class, and the unclassed Services that controller serves by their type annotation.
 */
export { LBC_NLB_CLASS };
const LBC_TYPE_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-type";
/** The type annotation's values the AWS Load Balancer Controller serves ("nlb" is the in-tree provider's). */
const LBC_TYPES = ["external", "nlb-ip"];

/** The Service should have a load balancer from this controller now. */
export function wantsLoadBalancer(svc: V1Service, cfg: ClassConfig): boolean {
  if (svc.spec?.type !== "LoadBalancer" || svc.metadata?.deletionTimestamp) return false;
  const cls = svc.spec.loadBalancerClass;
  if (cls) return cls === cfg.loadBalancerClass;
  if (cfg.defaultForUnclassed) return true;
  const type = svc.metadata?.annotations?.[LBC_TYPE_ANNOTATION]?.trim();
  return cfg.loadBalancerClass === LBC_NLB_CLASS && type !== undefined && LBC_TYPES.includes(type);
}

/** This controller took the Service on at some point and may still hold cloud resources and the finalizer. */
export function tookOn(svc: V1Service, cfg: ClassConfig): boolean {
  return svc.metadata?.annotations?.[MANAGED_BY_ANNOTATION] === cfg.loadBalancerClass;
}

export function hasFinalizer(svc: V1Service): boolean {
  return svc.metadata?.finalizers?.includes(FINALIZER) ?? false;
}
