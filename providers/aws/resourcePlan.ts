// The shape every resource's part of a plan shares (securityGroups/, loadBalancer/, targetGroups/, listeners/):
// its operations split into those that make or change and those that remove, and one description per operation kind,
// so plan.ts can order the parts make-before-break and describe any operation without knowing its resource.
type Kinded = { kind: string };

/** An operation in words (a line, or one per thing it changes), for Events, logs and `porticoctl plan`. */
export type Describers<O extends Kinded> = {
  [K in O["kind"]]: (op: Extract<O, { kind: K }>) => string | string[];
};

/** A plan's operations for one resource: those that make or change, and those that remove after the rest is made. */
export interface ResourcePlan<O> {
  make: O[];
  break: O[];
}

export const listed = (a: Record<string, string>) =>
  Object.entries(a)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
