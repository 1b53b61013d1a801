// The AWS provider's settings on the controller's command line: the default scheme, the region, how long an
// observation stands, the account's security-group rule quota, and taking over from the AWS Load Balancer
// Controller.
import { UsageError } from "../../shared/usageError.ts";
import { LBC_NLB_CLASS } from "../classes.ts";
import type { CommonSettings, FlagTable, FlagValues } from "../descriptor.ts";
import {
  DEFAULT_RULES_PER_SECURITY_GROUP,
  MAX_RULES_PER_SECURITY_GROUP,
} from "./securityGroups/ruleLimit.ts";

export interface AwsSettings {
  defaultScheme: "internal" | "internet-facing";
  region?: string;
  observationTtlMs: number;
  fullObservationPeriodMs?: number;
  /** The account's quota of inbound rules per security group and address family (absent: EC2's default). */
  rulesPerSecurityGroup?: number;
  /**
   * Take over the AWS Load Balancer Controller's NLBs in place: the cluster name it tagged them with, whether a
   * Service its NLB cannot serve in place may get a new one (a new DNS name), and its leader Lease.
   */
  takeOverLbc?: { cluster: string; recreate: boolean; lease: { namespace: string; name: string } };
}

/** LBC's leader-election Lease (its --leader-election-id default), in the namespace LBC runs in. */
export const LBC_LEADER_LEASE = { namespace: "kube-system", name: "aws-load-balancer-controller-leader" };

export const AWS_FLAGS = {
  "aws-take-over-lbc": { type: "boolean" },
  "aws-take-over-lbc-cluster": { type: "string" },
  "aws-take-over-lbc-recreate": { type: "boolean" },
  "aws-lbc-leader-lease": { type: "string" },
  "aws-default-scheme": { type: "string" },
  "aws-region": { type: "string" },
  "aws-observation-ttl": { type: "string" },
  "aws-full-observation-period": { type: "string" },
  "aws-rules-per-security-group": { type: "string" },
} as const satisfies FlagTable;

/** The flags' lines in the controller's --help. */
export const AWS_USAGE = `  --aws-region REGION               the AWS region (default: the SDK's, from AWS_REGION or the instance's metadata)
  --aws-default-scheme SCHEME       internal (default) or internet-facing
  --aws-observation-ttl SECONDS     reuse a full observation for target-only changes this long (default 60, 0: never)
  --aws-full-observation-period SECONDS
                                    and past that, while the account's load balancer and target group listings show
                                    it unchanged, this long: the longest listener or attribute drift goes unseen
                                    (default 3600)
  --aws-rules-per-security-group N  the inbound rules a security group may hold per address family: the account's
                                    EC2 quota (default 60); a Service whose NLB would need more is refused
  --aws-take-over-lbc               serve the AWS Load Balancer Controller's Services instead of it, beside the
                                    controller's own (class service.k8s.aws/nlb, and unclassed ones of
                                    aws-load-balancer-type external or nlb-ip); their NLBs, listeners and
                                    target groups are taken over in place (same ARN and DNS name)
  --aws-take-over-lbc-cluster NAME  the cluster name the AWS Load Balancer Controller tagged its resources with
                                    (default: --cluster-name); implies --aws-take-over-lbc
  --aws-take-over-lbc-recreate      when its NLB cannot serve a Service in place (scheme, IP address type, security
                                    groups or static addresses differ), make a new one (a new DNS name) beside it
                                    instead of refusing
  --aws-lbc-leader-lease NS/NAME    its leader-election Lease: while renewed, nothing is taken over
                                    (default kube-system/aws-load-balancer-controller-leader)`;

/** The AWS provider's settings; read only for a controller of this provider (another refuses its flags). */
export function awsSettings(
  values: FlagValues,
  _env: NodeJS.ProcessEnv,
  common: CommonSettings,
): AwsSettings {
  const str = (flag: keyof typeof AWS_FLAGS) => values[flag] as string | undefined;
  const bool = (flag: keyof typeof AWS_FLAGS) => values[flag] as boolean | undefined;
  const scheme = str("aws-default-scheme") ?? "internal";
  if (scheme !== "internal" && scheme !== "internet-facing")
    throw new UsageError("--aws-default-scheme must be internal or internet-facing");
  const observationTtl = Number(str("aws-observation-ttl") ?? 60);
  if (!Number.isFinite(observationTtl) || observationTtl < 0)
    throw new UsageError("--aws-observation-ttl must be a number of seconds, 0 or more");
  const fullPeriod = Number(str("aws-full-observation-period") ?? 3600);
  if (!Number.isFinite(fullPeriod) || fullPeriod <= 0)
    throw new UsageError("--aws-full-observation-period must be a positive number of seconds");
  const rules = Number(str("aws-rules-per-security-group") ?? DEFAULT_RULES_PER_SECURITY_GROUP);
  if (!Number.isInteger(rules) || rules < 1 || rules > MAX_RULES_PER_SECURITY_GROUP)
    throw new UsageError(
      `--aws-rules-per-security-group must be a whole number from 1 to ${MAX_RULES_PER_SECURITY_GROUP} (the account's quota of inbound rules per security group)`,
    );
  const takeOver = (bool("aws-take-over-lbc") ?? false) || str("aws-take-over-lbc-cluster") !== undefined;
  const lease = (
    str("aws-lbc-leader-lease") ?? `${LBC_LEADER_LEASE.namespace}/${LBC_LEADER_LEASE.name}`
  ).split("/");
  if (lease.length !== 2 || !lease[0] || !lease[1])
    throw new UsageError("--aws-lbc-leader-lease must be NAMESPACE/NAME");
  if (takeOver && common.loadBalancerClass === LBC_NLB_CLASS)
    throw new UsageError(
      `--aws-take-over-lbc serves the class ${LBC_NLB_CLASS} beside the controller's own; drop --load-balancer-class ${LBC_NLB_CLASS}`,
    );
  const region = str("aws-region");
  return {
    defaultScheme: scheme,
    observationTtlMs: observationTtl * 1000,
    fullObservationPeriodMs: fullPeriod * 1000,
    rulesPerSecurityGroup: rules,
    ...(region ? { region } : {}),
    ...(takeOver
      ? {
          takeOverLbc: {
            cluster: str("aws-take-over-lbc-cluster") || common.clusterName,
            recreate: bool("aws-take-over-lbc-recreate") ?? false,
            lease: { namespace: lease[0], name: lease[1] },
          },
        }
      : {}),
  };
}
