// What a Service's resources are once Portico's own writes went through: the observation the plan was made from,
// changed by the plan's operations as ELBv2 and EC2 answered them (the ARNs and descriptions of what was made).
// Kept as the Service's recent observation, it spares the passes that follow a change (a new Service is looked at
// again and again until its targets pass their first health checks) a full observation of what Portico itself has
// just made: each of them reads its targets alone. It is kept only when planning against it finds nothing left to
// do, and it is trusted no longer than a full observation is (RecentObservations: past the TTL the account's
// listings must confirm it, and a full observation comes at least every full-observation period), so drift made
// outside Portico is found as it is after any full observation. Pure: apply records, this derives.
import type { LoadBalancer, TargetGroup } from "@aws-sdk/client-elastic-load-balancing-v2";
import type {
  DesiredLoadBalancer,
  Observed,
  ObservedListener,
  ObservedLoadBalancer,
  ObservedSecurityGroup,
  ObservedTargetGroup,
} from "./model.ts";
import { loadBalancerFields, targetGroupFields } from "./state/observe.ts";
import { plan, type Operation, type Plan } from "./plan.ts";

/** What apply made, as the cloud answered (filled in by apply as it goes). */
export interface Written {
  loadBalancer?: LoadBalancer;
  /** Target groups made, by name. */
  targetGroups: Map<string, TargetGroup>;
  /** Listeners made: port → ARN. */
  listeners: Map<number, string>;
  /** The Service's own security group, when it was made. */
  securityGroupId?: string;
  /** The cluster's shared backend group, when the plan stood in for it (it was made, or found, as it ran). */
  sharedGroupId?: string;
}

export function nothingWritten(): Written {
  return { targetGroups: new Map(), listeners: new Map() };
}

/**
 * The writes whose outcome is known from the plan and the answers alone. Anything else (subnets and groups set
 * on an NLB, backend rules whose IDs EC2 chooses, deletions of load balancers and groups) is observed afresh.
 */
const FOLLOWED = new Set<Operation["kind"]>([
  "createSecurityGroup",
  "authorizeIngress",
  "revokeIngress",
  "createLoadBalancer",
  "modifyLoadBalancerAttributes",
  "createTargetGroup",
  "modifyHealthCheck",
  "modifyTargetGroupAttributes",
  "registerTargets",
  "deregisterTargets",
  "createListener",
  "modifyListener",
  "addListenerCertificates",
  "removeListenerCertificates",
  "modifyListenerAttributes",
  "deleteListener",
  "deleteTargetGroup",
  // The cluster's shared rules: nothing of the Service's own changes.
  "useSharedBackend",
]);

/**
 * The observation after `operations` (all of them carried out) turned `before` into `desired`, or undefined when
 * that cannot be told without reading (an operation not followed, something made that the answers do not
 * describe, or a plan against the result that would still change anything).
 */
export function observedAfter(
  desired: DesiredLoadBalancer,
  before: Observed,
  p: Plan,
  operations: Operation[],
  written: Written,
): Observed | undefined {
  if (p.replaced.length || operations.some((op) => !FOLLOWED.has(op.kind))) return undefined;
  const made = written.loadBalancer;
  const current = p.current;
  if (!made && !current) return undefined;
  const lbArn = made?.LoadBalancerArn ?? current!.arn;

  const securityGroups = ownGroup(desired, before, written);
  if (!securityGroups) return undefined;

  const targetGroups: ObservedTargetGroup[] = [];
  for (const tg of desired.targetGroups) {
    const answer = written.targetGroups.get(tg.name);
    const was = before.targetGroups.find((t) => t.name === tg.name);
    // A group found by name after a refused creation has no description here: read it.
    if (answer?.TargetGroupName !== tg.name && !was) return undefined;
    const fields = answer?.TargetGroupName === tg.name ? targetGroupFields(answer) : was!;
    const forwarded = desired.listeners.some((l) => l.targetGroupName === tg.name);
    targetGroups.push({
      arn: fields.arn,
      name: fields.name,
      protocol: fields.protocol,
      port: fields.port,
      targetType: fields.targetType,
      healthCheck: operations.some((op) => op.kind === "modifyHealthCheck" && op.name === tg.name)
        ? tg.healthCheck
        : fields.healthCheck,
      attributes: { ...was?.attributes, ...tg.attributes },
      targets: [...tg.targets],
      loadBalancerArns: [...new Set([...fields.loadBalancerArns, ...(forwarded ? [lbArn] : [])])],
    });
  }
  const arnOf = new Map(targetGroups.map((tg) => [tg.name, tg.arn]));

  const listeners: ObservedListener[] = [];
  for (const l of desired.listeners) {
    const arn = written.listeners.get(l.port) ?? current?.listeners.find((x) => x.port === l.port)?.arn;
    if (!arn) return undefined;
    const was = current?.listeners.find((x) => x.arn === arn);
    const sslPolicy = l.sslPolicy ?? was?.sslPolicy;
    const alpnPolicy = l.alpnPolicy ?? (l.protocol === "TLS" ? "None" : undefined);
    const extra = l.certificateArns.slice(1).filter((c) => c !== l.certificateArns[0]);
    listeners.push({
      arn,
      port: l.port,
      protocol: l.protocol,
      certificateArns: l.certificateArns.length ? [l.certificateArns[0]!, ...extra] : [],
      ...(sslPolicy ? { sslPolicy } : {}),
      ...(alpnPolicy ? { alpnPolicy } : {}),
      attributes: { ...was?.attributes, ...l.attributes },
      ...(arnOf.get(l.targetGroupName) ? { targetGroupArn: arnOf.get(l.targetGroupName)! } : {}),
    });
  }

  const after: Observed = {
    loadBalancers: [
      {
        ...(made ? loadBalancerFields(made) : withoutParts(current!)),
        attributes: { ...current?.attributes, ...desired.attributes },
        listeners,
      },
    ],
    targetGroups,
    securityGroups,
    backendRules: before.backendRules,
  };
  try {
    const again = plan(desired, after);
    return again.operations.length === 0 && again.replaced.length === 0 && again.current ? after : undefined;
  } catch {
    // A refusal is for a full observation to make (it names the field).
    return undefined;
  }
}

function withoutParts({ attributes: _a, listeners: _l, ...fields }: ObservedLoadBalancer) {
  return fields;
}

/** The Service's groups after the writes: its own with the ingress asked for; undefined if its ID is unknown. */
function ownGroup(
  desired: DesiredLoadBalancer,
  before: Observed,
  written: Written,
): ObservedSecurityGroup[] | undefined {
  const own = desired.securityGroup;
  if (!own) return before.securityGroups;
  const was = before.securityGroups.find((g) => g.name === own.name);
  const id = was?.id ?? written.securityGroupId;
  if (!id) return undefined;
  return [
    ...before.securityGroups.filter((g) => g.name !== own.name),
    { id, name: own.name, ingress: [...own.ingress] },
  ];
}
