// The conditions Portico writes on a Service: LoadBalancerReady (the load balancer is made as asked) and Serving
// (traffic can reach a backend through it). Named here because more than the controller reads them: the bare-metal
// provider tells by them which addresses are its own, porticoctl shows them.
export const READY_CONDITION = "portico.io/LoadBalancerReady";
export const SERVING_CONDITION = "portico.io/Serving";

/**
 * Every condition type Portico writes on a Service. Letting a Service go removes each of them, so a type added
 * here is removed too; the status writer takes no other type (controller/status.ts), and a test finds every
 * portico.io/<Condition> named in the code in this list.
 */
export const PORTICO_CONDITIONS = [READY_CONDITION, SERVING_CONDITION] as const;
export type PorticoCondition = (typeof PORTICO_CONDITIONS)[number];
