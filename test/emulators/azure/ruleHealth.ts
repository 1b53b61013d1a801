// A load-balancing rule's health (POST .../loadBalancingRules/{rule}/health, a long-running operation whose
// result is LoadBalancerHealthPerRule): each member of the rule's backend pool, Up or Down, with a reason code.
// ARM itself probes nothing here. Until a prober reports (the Azure edge on the local cluster, which probes the
// members as the rule's probe says, through PUT /_emulator/ruleHealth), every member is Up, as the emulator's
// forwarding-free world has always treated them; once one reports, a member it has not judged is Down, as Azure
// shows a member its probe has not yet found healthy. A member set administratively Down is Down either way.
// Reason codes: Up_Probe_Success, Up_Admin and Down_Admin are Azure's; a failing or pending probe is told with
// the emulator's own Down_Probe_Failure.
import type { BackendAddress, LoadBalancer, LoadBalancingRule } from "./model.ts";

export type MemberState = "Up" | "Down";

/** A prober's report: rule ID (any casing) → member address → state. */
export type RuleHealthReport = Record<string, Record<string, MemberState>>;

export class RuleHealth {
  /** Undefined until a prober reports. */
  private verdicts: Map<string, Map<string, MemberState>> | undefined;

  /** Replaces every verdict with the prober's latest. */
  report(report: RuleHealthReport): void {
    this.verdicts = new Map(
      Object.entries(report).map(([rule, members]) => [rule.toLowerCase(), new Map(Object.entries(members))]),
    );
  }

  /** Back to no prober: every member Up. */
  reset(): void {
    this.verdicts = undefined;
  }

  describe(): { reported: boolean; rules: RuleHealthReport } {
    const rules: RuleHealthReport = {};
    for (const [rule, members] of this.verdicts ?? []) rules[rule] = Object.fromEntries(members);
    return { reported: this.verdicts !== undefined, rules };
  }

  /** LoadBalancerHealthPerRule for `rule` of `lb`, as ARM renders it. */
  of(lb: LoadBalancer, rule: LoadBalancingRule, ruleId: string): Record<string, unknown> {
    const pool = lb.properties.backendAddressPools.find(
      (p) =>
        `${lb.id}/backendAddressPools/${p.name}`.toLowerCase() === rule.backendAddressPoolId?.toLowerCase(),
    );
    const judged = this.verdicts?.get(ruleId.toLowerCase());
    const members = (pool?.loadBalancerBackendAddresses ?? [])
      .filter((a) => a.ipAddress)
      .map((a) => ({ ipAddress: a.ipAddress!, ...this.stateOf(a, rule, judged) }));
    return {
      up: members.filter((m) => m.state === "Up").length,
      down: members.filter((m) => m.state === "Down").length,
      loadBalancerBackendAddresses: members,
    };
  }

  private stateOf(
    member: BackendAddress,
    rule: LoadBalancingRule,
    judged: Map<string, MemberState> | undefined,
  ): { state: MemberState; reason: string } {
    if (member.adminState?.toLowerCase() === "down") return { state: "Down", reason: "Down_Admin" };
    if (member.adminState?.toLowerCase() === "up") return { state: "Up", reason: "Up_Admin" };
    // Without a prober, or without a probe on the rule, every member takes traffic.
    if (!this.verdicts || !rule.probeId) return { state: "Up", reason: "Up_Probe_Success" };
    return judged?.get(member.ipAddress!) === "Up"
      ? { state: "Up", reason: "Up_Probe_Success" }
      : { state: "Down", reason: "Down_Probe_Failure" };
  }
}

/** Checks a report's shape; throws with what is wrong. */
export function validateRuleHealthReport(input: unknown): RuleHealthReport {
  const rules = (input as { rules?: unknown }).rules;
  if (typeof rules !== "object" || rules === null || Array.isArray(rules))
    throw new Error('"rules" must map rule IDs to { "<member address>": "Up" | "Down" }');
  for (const [rule, members] of Object.entries(rules as Record<string, unknown>)) {
    if (typeof members !== "object" || members === null || Array.isArray(members))
      throw new Error(`"rules.${rule}" must map member addresses to "Up" or "Down"`);
    for (const [ip, state] of Object.entries(members as Record<string, unknown>))
      if (state !== "Up" && state !== "Down")
        throw new Error(`"rules.${rule}.${ip}" must be "Up" or "Down", not ${JSON.stringify(state)}`);
  }
  return rules as RuleHealthReport;
}
