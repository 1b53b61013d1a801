// The load-balancer classes Portico serves, one per provider. Kept apart from the providers so that naming a
// class (flags, porticoctl) does not load any cloud SDK.
export const AWS_LOAD_BALANCER_CLASS = "portico.io/aws-nlb";
export const AZURE_LOAD_BALANCER_CLASS = "portico.io/azure-lb";
export const METAL_LOAD_BALANCER_CLASS = "portico.io/metal";
/** The AWS Load Balancer Controller's NLB class, served by an AWS controller told to take over from it. */
export const LBC_NLB_CLASS = "service.k8s.aws/nlb";

/** Which provider's annotation families a Service of this class is read with. */
export function providerOfClass(loadBalancerClass: string): "aws" | "azure" | "metal" | undefined {
  if (loadBalancerClass === AWS_LOAD_BALANCER_CLASS || loadBalancerClass === LBC_NLB_CLASS) return "aws";
  if (loadBalancerClass === AZURE_LOAD_BALANCER_CLASS) return "azure";
  if (loadBalancerClass === METAL_LOAD_BALANCER_CLASS) return "metal";
  return undefined;
}
