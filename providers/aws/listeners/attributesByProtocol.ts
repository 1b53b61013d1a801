// Target-group attribute values ELBv2 takes for some protocols only (the API reference's TargetGroupAttribute, and
// the NLB guide's target group attributes): client IP preservation stays on for UDP and TCP_UDP groups, which have
// no unhealthy-target connection settings either; TLS groups have no stickiness; and an unhealthy draining interval
// needs connection termination for unhealthy targets off. ELBv2 refuses a value only at ModifyTargetGroupAttributes,
// after the target group exists, so each is refused before the first call (as attributeRules.ts refuses values no
// protocol takes), naming the annotation that set it and the port whose protocol rules it out. Pure.
import { ConfigurationError } from "../../errors.ts";
import { AWS_ANNOTATIONS as M, type AwsServiceSettings } from "../annotations/settings.ts";
import type { ListenerProtocol } from "../model.ts";
import { targetGroupAttributes } from "./portSettings.ts";

/** A listener's target group: the Service port it serves and the protocol ELBv2 gives it. */
export interface TargetGroupProtocol {
  port: number;
  protocol: ListenerProtocol;
}

const UNHEALTHY = "target_health_state.unhealthy.";
const TERMINATION = `${UNHEALTHY}connection_termination.enabled`;
const DRAINING = `${UNHEALTHY}draining_interval_seconds`;

interface Rule {
  /** What ELBv2 refuses in a group of this protocol with these attributes (the user's), or undefined. */
  refused(protocol: ListenerProtocol, attributes: Record<string, string>): string | undefined;
  /** The attribute the refusal is about (whose annotation is named). */
  key(attributes: Record<string, string>): string;
  fix: string;
}

const udp = (p: ListenerProtocol) => p === "UDP" || p === "TCP_UDP";

const RULES: Rule[] = [
  {
    refused: (protocol, a) =>
      udp(protocol) && a["preserve_client_ip.enabled"] === "false"
        ? `preserve_client_ip.enabled=false cannot apply: ELBv2 keeps client IP preservation on, and impossible to turn off, for ${protocol} target groups`
        : undefined,
    key: () => "preserve_client_ip.enabled",
    fix: `remove preserve_client_ip.enabled=false, or set it for TCP ports alone (${M.targetGroupAttributesPrefix}<port>)`,
  },
  {
    refused: (protocol, a) => {
      const keys = Object.keys(a).filter((k) => k.startsWith(UNHEALTHY));
      return udp(protocol) && keys.length
        ? `${keys.join(", ")} cannot apply: ELBv2 has no unhealthy-target connection settings for ${protocol} target groups`
        : undefined;
    },
    key: (a) => Object.keys(a).find((k) => k.startsWith(UNHEALTHY))!,
    fix: `set them for TCP ports alone (${M.targetGroupAttributesPrefix}<port>)`,
  },
  {
    refused: (protocol, a) =>
      protocol === "TLS" && a["stickiness.enabled"] === "true"
        ? "stickiness.enabled=true cannot apply: ELBv2 offers no stickiness on TLS target groups (TLS to the targets, backend-protocol ssl)"
        : undefined,
    key: () => "stickiness.enabled",
    fix: `remove stickiness.enabled=true, or end TLS at the NLB (${M.backendProtocol}: tcp)`,
  },
  {
    refused: (_protocol, a) =>
      a[DRAINING] !== undefined && a[TERMINATION] !== "false"
        ? `${DRAINING} applies only when ${TERMINATION} is false, which ELBv2's default (true) is not`
        : undefined,
    key: () => DRAINING,
    fix: `add ${TERMINATION}=false, or remove the draining interval`,
  },
];

/** Refuses the first attribute value a target group's protocol rules out, naming the annotation that set it. */
export function checkAttributesByProtocol(
  settings: AwsServiceSettings,
  groups: readonly TargetGroupProtocol[],
): void {
  for (const { port, protocol } of groups) {
    // The user's attributes alone: Portico's own defaults suit every protocol (ClientIP stickiness skips TLS).
    const attributes = targetGroupAttributes(settings, port, {});
    for (const rule of RULES) {
      const problem = rule.refused(protocol, attributes);
      if (problem === undefined) continue;
      const key = rule.key(attributes);
      const perPort = settings.perPortTargetGroupAttributes[port]?.[key];
      const annotation =
        perPort !== undefined && perPort !== ""
          ? `${M.targetGroupAttributesPrefix}${port}`
          : M.targetGroupAttributes;
      throw new ConfigurationError(
        "InvalidAnnotation",
        `metadata.annotations[${annotation}]`,
        `${problem} (spec.ports: port ${port} is ${protocol === "TLS" ? "a TLS target group" : protocol})`,
        rule.fix,
      );
    }
  }
}
