// The take-over as a plan operation: Portico's ownership tags onto the AWS Load Balancer Controller's NLB and
// target groups, then LBC's tracking tags off. Planned like any other write, so `porticoctl plan` shows it and apply
// is the one place it happens; the rest of the plan is made from the observation as it will be once it is done
// (adoption.ts's asTaken).
import type { Describers } from "../resourcePlan.ts";
import type { Adoption } from "./adoption.ts";

export interface TakenResource {
  arn: string;
  kind: "loadbalancer" | "targetgroup";
}

export type TakeOverOperation = {
  kind: "takeOverFromLbc";
  resources: TakenResource[];
  /** The adoption in words (adoption.ts's describeAdoption). */
  lines: string[];
};

/** What adopting retags, or nothing when the Service is not adopted in place. */
export function takeOverOperation(adoption: Adoption, lines: string[]): TakeOverOperation | undefined {
  if (adoption.kind !== "adopt") return undefined;
  const resources: TakenResource[] = [
    ...(adoption.loadBalancer ? [{ arn: adoption.loadBalancer.arn, kind: "loadbalancer" as const }] : []),
    ...adoption.targetGroups.map((f) => ({ arn: f.group.observed.arn, kind: "targetgroup" as const })),
  ];
  return resources.length ? { kind: "takeOverFromLbc", resources, lines } : undefined;
}

export const takeOverDescriptions: Describers<TakeOverOperation> = {
  takeOverFromLbc: (op) => op.lines,
};
