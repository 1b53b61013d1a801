import { describe, expect, it } from "vitest";
import type { BackendRule, ObservedBackendRule } from "../model.ts";
import { backendRuleKey, ruleDifferences, type HeldRules } from "./securityRules.ts";

const http = { protocol: "tcp" as const, port: 80, cidr: "0.0.0.0/0" };
const office = { protocol: "tcp" as const, port: 443, cidr: "192.0.2.0/24" };
const held: HeldRules = { group: { name: "portico-web", ingress: [http, office] }, backendRules: [] };
const group = (ingress: (typeof http)[]) => [{ id: "sg-nlb", name: "portico-web", ingress }];

const traffic: BackendRule = { groupId: "sg-nodes", protocol: "tcp", port: 30080, source: "10.0.0.0/16" };
const checks: BackendRule = { groupId: "sg-nodes", protocol: "tcp", port: 32000, source: "10.0.0.0/24" };
const observed = (r: BackendRule, ruleId: string): ObservedBackendRule => ({ ...r, ruleId });
const keys = (...rules: BackendRule[]) => new Set(rules.map(backendRuleKey));

describe("ruleDifferences (AWS)", () => {
  it("finds nothing when the NLB's group holds exactly its ingress", () => {
    expect(ruleDifferences(held, group([office, http]), [], new Set())).toEqual([]);
  });

  it("names an ingress rule revoked by hand and one added to Portico's own group, both mendable", () => {
    const found = group([office, { protocol: "tcp", port: 22, cidr: "0.0.0.0/0" }]);
    expect(ruleDifferences(held, found, [], new Set())).toEqual([
      { text: "ingress tcp/80 from 0.0.0.0/0 is gone from the NLB's security group sg-nlb", mendable: true },
      { text: "ingress tcp/22 from 0.0.0.0/0 was added to the NLB's security group sg-nlb", mendable: true },
    ]);
  });

  it("leaves a group the read does not hold to the full observation", () => {
    expect(ruleDifferences(held, [], [], new Set())).toEqual([]);
  });

  it("backend rules: gone (unless another Service's equal rule stands, which lets the same traffic in) and added", () => {
    const mine: HeldRules = { backendRules: [traffic, checks] };
    expect(
      ruleDifferences(mine, [], [observed(traffic, "r1"), observed(checks, "r2")], keys(traffic, checks)),
    ).toEqual([]);
    // The health-check rule revoked by hand; the traffic rule is another Service's, equal to this one's.
    expect(ruleDifferences(mine, [], [], keys(traffic))).toEqual([
      { text: "backend rule tcp/32000 from 10.0.0.0/24 is gone from sg-nodes", mendable: false },
    ]);
    const extra = { ...traffic, port: 30081 };
    expect(
      ruleDifferences(
        { backendRules: [traffic] },
        [],
        [observed(traffic, "r1"), observed(extra, "r3")],
        keys(traffic, extra),
      ),
    ).toEqual([{ text: "backend rule tcp/30081 from 10.0.0.0/16 was added to sg-nodes", mendable: true }]);
  });
});
