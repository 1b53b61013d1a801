// What ELBv2 accepts as Network Load Balancer and NLB target-group attributes, and as tags: checked before the
// first call, because ELBv2 refuses a bad attribute only after the load balancer or target group exists
// (CreateLoadBalancer, then ModifyLoadBalancerAttributes), which would leave it half-made.
import { invalidAnnotation as fail } from "../../annotationValues.ts";

type Rule =
  | { kind: "bool" }
  | { kind: "int"; min: number; max: number }
  | { kind: "enum"; values: string[] }
  | { kind: "text" }
  | { kind: "countOrOff"; min: number; max: number };

const BOOL: Rule = { kind: "bool" };
const TEXT: Rule = { kind: "text" };

/** The NLB attributes of the ELBv2 API reference (DescribeLoadBalancerAttributes for type network). */
export const LOAD_BALANCER_ATTRIBUTES: Record<string, Rule> = {
  "deletion_protection.enabled": BOOL,
  "load_balancing.cross_zone.enabled": BOOL,
  "access_logs.s3.enabled": BOOL,
  "access_logs.s3.bucket": TEXT,
  "access_logs.s3.prefix": TEXT,
  "ipv6.deny_all_igw_traffic": BOOL,
  "dns_record.client_routing_policy": {
    kind: "enum",
    values: ["any_availability_zone", "availability_zone_affinity", "partial_availability_zone_affinity"],
  },
  "zonal_shift.config.enabled": BOOL,
  "secondary_ips.auto_assigned.per_subnet": { kind: "int", min: 0, max: 7 },
};

/** The target-group attributes ELBv2 accepts for TCP, UDP, TCP_UDP and TLS target groups. */
export const TARGET_GROUP_ATTRIBUTES: Record<string, Rule> = {
  "deregistration_delay.timeout_seconds": { kind: "int", min: 0, max: 3600 },
  "deregistration_delay.connection_termination.enabled": BOOL,
  "preserve_client_ip.enabled": BOOL,
  "proxy_protocol_v2.enabled": BOOL,
  "stickiness.enabled": BOOL,
  "stickiness.type": { kind: "enum", values: ["source_ip"] },
  "load_balancing.cross_zone.enabled": {
    kind: "enum",
    values: ["true", "false", "use_load_balancer_configuration"],
  },
  "target_health_state.unhealthy.connection_termination.enabled": BOOL,
  "target_health_state.unhealthy.draining_interval_seconds": { kind: "int", min: 0, max: 360000 },
  "target_group_health.dns_failover.minimum_healthy_targets.count": {
    kind: "countOrOff",
    min: 1,
    max: 100000,
  },
  "target_group_health.dns_failover.minimum_healthy_targets.percentage": {
    kind: "countOrOff",
    min: 1,
    max: 100,
  },
  "target_group_health.unhealthy_state_routing.minimum_healthy_targets.count": {
    kind: "int",
    min: 1,
    max: 100000,
  },
  "target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage": {
    kind: "countOrOff",
    min: 1,
    max: 100,
  },
};

function valueProblem(rule: Rule, value: string): string | undefined {
  switch (rule.kind) {
    case "bool":
      return value === "true" || value === "false" ? undefined : 'use "true" or "false"';
    case "enum":
      return rule.values.includes(value) ? undefined : `use one of ${rule.values.join(", ")}`;
    case "int":
    case "countOrOff": {
      if (rule.kind === "countOrOff" && value === "off") return undefined;
      const n = Number(value);
      const ok = /^\d+$/.test(value) && n >= rule.min && n <= rule.max;
      return ok
        ? undefined
        : `give a whole number from ${rule.min} to ${rule.max}${rule.kind === "countOrOff" ? ' or "off"' : ""}`;
    }
    case "text":
      return value === "" ? "give a value" : undefined;
  }
}

/** Refuses (naming `annotation`) an attribute ELBv2 does not have for NLBs, or a value it would refuse. */
export function checkAttributes(
  annotation: string,
  attributes: Record<string, string>,
  rules: Record<string, Rule>,
): void {
  for (const [key, value] of Object.entries(attributes)) {
    const rule = rules[key];
    if (!rule)
      fail(
        annotation,
        `"${key}" is not an attribute ELBv2 has here`,
        `use one of ${Object.keys(rules).join(", ")}`,
      );
    const problem = valueProblem(rule, value);
    if (problem) fail(annotation, `"${key}=${value}" would be refused by ELBv2`, problem);
  }
}

/** Tag keys Portico writes itself, and the prefix AWS keeps for its own tags. */
const RESERVED_TAG_PREFIXES = ["portico.io/", "aws:"];

/** ELBv2's and EC2's tag rules: at most 50 per resource, keys of 1–128 and values of 0–256 characters. */
export function checkTags(
  annotation: string,
  tags: Record<string, string>,
  reservedForPortico: number,
): void {
  for (const [key, value] of Object.entries(tags)) {
    const reserved = RESERVED_TAG_PREFIXES.find((p) => key.toLowerCase().startsWith(p));
    if (reserved)
      fail(
        annotation,
        `"${key}" uses the reserved prefix ${reserved}`,
        reserved === "aws:"
          ? "AWS keeps aws: tags for itself; choose another key"
          : "Portico writes these tags itself; choose another key",
      );
    if (key.length > 128)
      fail(annotation, `the tag key "${key.slice(0, 20)}…" is longer than 128 characters`, "shorten it");
    if (value.length > 256)
      fail(annotation, `the value of tag "${key}" is longer than 256 characters`, "shorten it");
  }
  const room = 50 - reservedForPortico;
  if (Object.keys(tags).length > room)
    fail(
      annotation,
      `${Object.keys(tags).length} tags, but a resource takes 50 and Portico writes ${reservedForPortico}`,
      `give at most ${room}`,
    );
}
