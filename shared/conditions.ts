// The conditions Portico writes on a Service: LoadBalancerReady (the load balancer is made as asked) and Serving
// (traffic can reach a backend through it). Named here because more than the controller reads them: the bare-metal
// provider tells by them which addresses are its own, porticoctl shows them.
export const READY_CONDITION = "portico.io/LoadBalancerReady";
export const SERVING_CONDITION = "portico.io/Serving";
