// The load-balancer classes Portico serves, one per provider. Kept apart from the providers so that naming a
// class (flags, porticoctl) does not load any cloud SDK.
export const AWS_LOAD_BALANCER_CLASS = "portico.io/aws-nlb";
export const AZURE_LOAD_BALANCER_CLASS = "portico.io/azure-lb";
export const METAL_LOAD_BALANCER_CLASS = "portico.io/metal";
