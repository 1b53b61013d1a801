// The AWS buckets Portico's client-side rate limiter (providers/rateLimit.ts, shared by every worker, learning
// the account's share from throttles, user work before background work) keeps: EC2 throttles each API action on
// its own bucket, sized by the action's category
// (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html); the limiter mirrors that
// grouping. ELBv2 and the tagging API publish no figures: the defaults are the AWS Load Balancer
// Controller's client-side limits, and conservative figures of the same order for the rest.
import {
  rateLimiterOptionsFromEnv as optionsFromEnv,
  type Limit,
  type RateLimiterOptions,
} from "../rateLimit.ts";

export { currentPriority, withPriority, type Priority } from "../rateLimit.ts";

const EC2_OWN: Record<string, Limit> = {
  CreateTags: { capacity: 100, refillPerSecond: 10 },
  DeleteTags: { capacity: 100, refillPerSecond: 10 },
  CreateNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  DeleteNetworkInterface: { capacity: 100, refillPerSecond: 5 },
  ModifyNetworkInterfaceAttribute: { capacity: 100, refillPerSecond: 5 },
  DescribeSecurityGroupReferences: { capacity: 20, refillPerSecond: 5 },
  DescribeStaleSecurityGroups: { capacity: 20, refillPerSecond: 5 },
};
const EC2_RESOURCE_INTENSIVE = /^(AuthorizeSecurityGroupIngress|RevokeSecurityGroupIngress)$/;
const EC2_SMALLER_UNFILTERED =
  /^Describe(Instances|InstanceStatus|NetworkInterfaces|SecurityGroups|Snapshots|SpotInstanceRequests|Volumes)$/;
const NON_MUTATING = /^(Describe|List|Search|Get)/;

/** The bucket a call draws from, and its documented (or chosen) figures for the whole account. */
export function limitOf(
  service: string,
  operation: string,
  input: unknown,
): { bucket: string; limit: Limit } {
  const own = (capacity: number, refillPerSecond: number, bucket = `${service}:${operation}`) => ({
    bucket,
    limit: { capacity, refillPerSecond },
  });
  if (service === "ec2") {
    const fixed = EC2_OWN[operation];
    if (fixed) return { bucket: `ec2:${operation}`, limit: fixed };
    if (EC2_RESOURCE_INTENSIVE.test(operation)) return own(50, 5);
    if (EC2_SMALLER_UNFILTERED.test(operation) && !filteredOrPaginated(input))
      return own(50, 10, `ec2:${operation}:unfiltered`);
    if (NON_MUTATING.test(operation)) return own(100, 20);
    return own(50, 5);
  }
  if (service === "elbv2") {
    if (operation === "RegisterTargets" || operation === "DeregisterTargets") return own(20, 4);
    if (operation.startsWith("Describe")) return own(40, 10);
    return own(20, 3);
  }
  if (service === "tagging") return own(20, 5);
  return own(100, 20);
}

function filteredOrPaginated(input: unknown): boolean {
  const i = (input ?? {}) as { Filters?: unknown[]; MaxResults?: unknown; NextToken?: unknown };
  return Boolean(i.Filters?.length) || i.MaxResults !== undefined || i.NextToken !== undefined;
}

/** The limiter's settings from the environment: undefined when PORTICO_AWS_RATE_LIMIT=off. */
export function rateLimiterOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): RateLimiterOptions | undefined {
  return optionsFromEnv("PORTICO_AWS", env);
}
