// What a Service's targets need on their own security groups (the node's for instance targets, the pod's ENI's
// for ip targets) so the NLB's traffic and health checks are not dropped: the ports, for the shared range rules,
// or, for an NLB without security groups, the Service's own address rules and the plan that adds the missing ones
// and revokes only Portico's own. Pure: the targets' groups are looked up beforehand (backendGroups.ts).
import type { BackendNeed } from "./backendRanges.ts";
import type { BackendRule, DesiredTargetGroup, ObservedBackendRule } from "../model.ts";

/**
 * The ports a Service's targets need open on their own groups, as the AWS Load Balancer Controller finds them:
 * the target port for the target group's protocol (UDP also over TCP when the group is TCP_UDP or the health check
 * probes the traffic port over TCP), and the health-check port over TCP when it is another port. `groupOf` gives a
 * target's security group (undefined: not found). The shared range rules admit them (backendRanges.ts).
 */
export function backendNeeds(
  targetGroups: DesiredTargetGroup[],
  groupOf: ReadonlyMap<string, string>,
): BackendNeed[] {
  const needs = new Map<string, BackendNeed>();
  const add = (groupId: string, protocol: BackendNeed["protocol"], port: number) =>
    needs.set(`${groupId}/${protocol}/${port}`, { groupId, protocol, port });
  for (const tg of targetGroups) {
    const hc = tg.healthCheck.port;
    const hcPort = hc === "traffic-port" ? undefined : Number(hc);
    for (const target of tg.targets) {
      const groupId = groupOf.get(target.id);
      if (!groupId) continue;
      const port = target.port;
      if (tg.protocol === "UDP" || tg.protocol === "TCP_UDP") {
        add(groupId, "udp", port);
        if (tg.protocol === "TCP_UDP" || hcPort === undefined || hcPort === port) add(groupId, "tcp", port);
      } else add(groupId, "tcp", port);
      if (hcPort !== undefined && hcPort !== port) add(groupId, "tcp", hcPort);
    }
  }
  return [...needs.values()].sort((a, b) =>
    `${a.groupId}/${a.protocol}/${a.port}`.localeCompare(`${b.groupId}/${b.protocol}/${b.port}`),
  );
}

/** Where an NLB without security groups sends from, for the AWS Load Balancer Controller's CIDR-based rules. */
export interface CidrSources {
  scheme: "internal" | "internet-facing";
  /** The NLB's subnets' CIDRs: its own addresses, from which it health-checks (and proxies, without client IPs). */
  subnetCidrs: { ipv4: string[]; ipv6: string[] };
  /** The VPC's CIDRs: where an internal NLB's clients are, when none are named. */
  vpcCidrs: { ipv4: string[]; ipv6: string[] };
  /** The Service's loadBalancerSourceRanges. */
  sourceRanges: string[];
}

/**
 * Without a security group on the NLB, rules name addresses, as the AWS Load Balancer Controller writes them: traffic
 * from the NLB's subnets, or from the clients themselves when the target sees them (UDP, or client IP preservation,
 * on by default for instance targets); health checks from the NLB's subnets, unless the traffic rule covers them.
 */
export function cidrBackendRules(
  targetGroups: DesiredTargetGroup[],
  groupOf: ReadonlyMap<string, string>,
  from: CidrSources,
): BackendRule[] {
  const rules = new Map<string, BackendRule>();
  for (const tg of targetGroups) {
    const family = tg.ipAddressType === "ipv6" ? "ipv6" : "ipv4";
    const subnets = from.subnetCidrs[family];
    const preserve =
      (tg.attributes["preserve_client_ip.enabled"] ?? String(tg.targetType === "instance")) === "true";
    const udp = tg.protocol === "UDP" || tg.protocol === "TCP_UDP";
    let traffic = subnets;
    let defaultUsed = false;
    if (udp || preserve) {
      traffic = from.sourceRanges.filter((c) => c.includes(":") === (family === "ipv6"));
      if (!traffic.length) {
        defaultUsed = true;
        traffic =
          from.scheme === "internal" ? from.vpcCidrs[family] : [family === "ipv6" ? "::/0" : "0.0.0.0/0"];
      }
    }
    const hc = tg.healthCheck.port;
    for (const target of tg.targets) {
      const groupId = groupOf.get(target.id);
      if (!groupId) continue;
      const add = (protocol: BackendRule["protocol"], port: number, sources: string[]) => {
        for (const source of sources) {
          const rule = { groupId, protocol, port, source };
          rules.set(ruleKey(rule), rule);
        }
      };
      const protocols: BackendRule["protocol"][] =
        tg.protocol === "TCP_UDP" ? ["tcp", "udp"] : udp ? ["udp"] : ["tcp"];
      for (const protocol of protocols) add(protocol, target.port, traffic);
      const hcPort = hc === "traffic-port" ? target.port : Number(hc);
      const covered =
        tg.protocol !== "UDP" &&
        hcPort === target.port &&
        (!preserve || defaultUsed || traffic.some((c) => c === "0.0.0.0/0" || c === "::/0"));
      if (!covered) add("tcp", hcPort, subnets);
    }
  }
  return [...rules.values()].sort((a, b) => ruleKey(a).localeCompare(ruleKey(b)));
}

/** What to authorize (grouped by backend group, one call each) and which of Portico's own rules to revoke. */
export function planBackendRules(
  desired: BackendRule[],
  observed: ObservedBackendRule[],
): { authorize: Map<string, BackendRule[]>; revoke: Map<string, ObservedBackendRule[]> } {
  // Observed rules naming a group are from before the shared range rules: revoked once those are in place.
  const want = new Map(desired.map((r) => [ruleKey(r), r]));
  const have = new Set(observed.map(ruleKey));
  const authorize = new Map<string, BackendRule[]>();
  for (const [key, rule] of want) {
    if (!have.has(key)) authorize.set(rule.groupId, [...(authorize.get(rule.groupId) ?? []), rule]);
  }
  const revoke = new Map<string, ObservedBackendRule[]>();
  for (const rule of observed) {
    if (!want.has(ruleKey(rule))) revoke.set(rule.groupId, [...(revoke.get(rule.groupId) ?? []), rule]);
  }
  return { authorize, revoke };
}

export const ruleKey = (r: BackendRule) => `${r.groupId}/${r.protocol}/${r.port}/${r.source}`;

/** The rule's description in the console: whose it is (its tags say the same, for machines). */
export function backendRuleDescription(cluster: string, service: { namespace: string; name: string }) {
  return `portico: NLB of ${service.namespace}/${service.name} in cluster ${cluster}`.slice(0, 255);
}
