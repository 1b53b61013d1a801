import { describe, expect, test } from "vitest";
import { parseAwsSettings } from "../annotations/settings.ts";
import type { BackendNeed } from "./backendRanges.ts";
import { backendNeeds, cidrBackendRules, planBackendRules, ruleKey } from "./backendRules.ts";
import { desiredLoadBalancer } from "../loadBalancer/desired.ts";
import type { BackendRule, ObservedBackendRule } from "../model.ts";
import { intent, NETWORK } from "../../../test/unit/support/awsIntent.ts";

const desired = (i = intent(), annotations: Record<string, string> = {}) =>
  desiredLoadBalancer(i, parseAwsSettings(annotations, { scheme: "internal" }), NETWORK, "prod");
const NODES = new Map([
  ["i-0000000000000000a", "sg-nodes"],
  ["i-0000000000000000b", "sg-nodes"],
]);
const keys = (rules: BackendRule[]) => rules.map(ruleKey);
const needs = (list: BackendNeed[]) => list.map((n) => `${n.groupId}/${n.protocol}/${n.port}`);

describe("backend needs (the ports the shared range rules must admit)", () => {
  test("instance targets, Cluster: the node port over TCP, once per group however many nodes share it", () => {
    expect(needs(backendNeeds(desired().targetGroups, NODES))).toEqual(["sg-nodes/tcp/30080"]);
  });

  test("Local: the health-check node port too", () => {
    const lb = desired(intent({ externalTrafficPolicy: "Local", healthCheckNodePort: 32000 }));
    expect(needs(backendNeeds(lb.targetGroups, NODES))).toEqual(["sg-nodes/tcp/30080", "sg-nodes/tcp/32000"]);
  });

  test("UDP: the node port over UDP and kube-proxy's health port over TCP; TCP_UDP: both protocols", () => {
    const udp = desired(intent({ ports: [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }] }));
    expect(needs(backendNeeds(udp.targetGroups, NODES))).toEqual([
      "sg-nodes/tcp/10256",
      "sg-nodes/udp/30053",
    ]);
    const both = desired(
      intent({
        ports: [
          { name: "t", protocol: "TCP", port: 53, nodePort: 30053 },
          { name: "u", protocol: "UDP", port: 53, nodePort: 30053 },
        ],
      }),
    );
    expect(needs(backendNeeds(both.targetGroups, NODES))).toEqual([
      "sg-nodes/tcp/30053",
      "sg-nodes/udp/30053",
    ]);
  });

  test("ip targets: each pod's group, at its target port; targets without a group get no rule", () => {
    const lb = desired(
      intent({
        endpoints: [
          { ip: "10.0.1.5", ports: { http: 8080 } },
          { ip: "10.0.1.6", ports: { http: 8081 } },
          { ip: "10.0.1.7", ports: { http: 8080 } },
        ],
      }),
      { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" },
    );
    const pods = new Map([
      ["10.0.1.5", "sg-a"],
      ["10.0.1.6", "sg-b"],
    ]);
    expect(needs(backendNeeds(lb.targetGroups, pods))).toEqual(["sg-a/tcp/8080", "sg-b/tcp/8081"]);
  });

  test("plan (address rules): adds what is missing grouped by backend group, revokes only observed rules no longer wanted", () => {
    const want = [
      { groupId: "sg-a", protocol: "tcp" as const, port: 1, source: "10.0.0.0/16" },
      { groupId: "sg-a", protocol: "tcp" as const, port: 2, source: "10.0.0.0/16" },
      { groupId: "sg-b", protocol: "tcp" as const, port: 1, source: "10.0.0.0/16" },
    ];
    const have: ObservedBackendRule[] = [
      { ruleId: "r1", groupId: "sg-a", protocol: "tcp", port: 1, source: "10.0.0.0/16" },
      { ruleId: "r2", groupId: "sg-c", protocol: "udp", port: 9, source: "10.0.0.0/16" },
      // From before the shared range rules: a rule naming the NLB's own group, no longer wanted.
      { ruleId: "r3", groupId: "sg-a", protocol: "tcp", port: 2, source: "sg-lb" },
    ];
    const p = planBackendRules(want, have);
    expect([...p.authorize].map(([g, rs]) => [g, rs.map((r) => r.port)])).toEqual([
      ["sg-a", [2]],
      ["sg-b", [1]],
    ]);
    expect([...p.revoke].map(([g, rs]) => [g, rs.map((r) => r.ruleId)])).toEqual([
      ["sg-c", ["r2"]],
      ["sg-a", ["r3"]],
    ]);
  });
});

describe("backend rules without an NLB security group (addresses, as the AWS Load Balancer Controller writes them)", () => {
  const from = {
    scheme: "internal" as const,
    subnetCidrs: { ipv4: ["10.0.0.0/24", "10.0.1.0/24"], ipv6: [] },
    vpcCidrs: { ipv4: ["10.0.0.0/16"], ipv6: [] },
    sourceRanges: [],
  };
  const ip = { "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip" };
  const pods = new Map([["10.0.1.5", "sg-pods"]]);

  test("instance targets keep client addresses: traffic from the VPC (internal) or everyone, or the source ranges", () => {
    const tgs = desired().targetGroups;
    expect(keys(cidrBackendRules(tgs, NODES, from))).toEqual(["sg-nodes/tcp/30080/10.0.0.0/16"]);
    expect(keys(cidrBackendRules(tgs, NODES, { ...from, scheme: "internet-facing" }))).toEqual([
      "sg-nodes/tcp/30080/0.0.0.0/0",
    ]);
    // Named clients do not cover the health checks, which come from the NLB's subnets.
    expect(keys(cidrBackendRules(tgs, NODES, { ...from, sourceRanges: ["192.0.2.0/24"] }))).toEqual([
      "sg-nodes/tcp/30080/10.0.0.0/24",
      "sg-nodes/tcp/30080/10.0.1.0/24",
      "sg-nodes/tcp/30080/192.0.2.0/24",
    ]);
  });

  test("ip targets over TCP see the NLB: traffic and health checks from its subnets", () => {
    const tgs = desired(intent(), ip).targetGroups;
    expect(keys(cidrBackendRules(tgs, pods, from))).toEqual([
      "sg-pods/tcp/8080/10.0.0.0/24",
      "sg-pods/tcp/8080/10.0.1.0/24",
    ]);
  });

  test("UDP: traffic from the clients, health checks from the subnets", () => {
    const udp = desired(intent({ ports: [{ name: "dns", protocol: "UDP", port: 53, nodePort: 30053 }] }));
    expect(keys(cidrBackendRules(udp.targetGroups, NODES, from))).toEqual([
      "sg-nodes/tcp/10256/10.0.0.0/24",
      "sg-nodes/tcp/10256/10.0.1.0/24",
      "sg-nodes/udp/30053/10.0.0.0/16",
    ]);
  });
});
