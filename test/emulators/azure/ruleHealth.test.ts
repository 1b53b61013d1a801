// A load-balancing rule's health through the real SDK's long-running poller: every member Up until a prober
// reports, then the prober's verdicts (a member it has not judged is Down), members set administratively Down,
// and ARM's answers for a rule that does not exist or a verb it does not take.
import type { LoadBalancerHealthPerRule } from "@azure/arm-network";
import { expect, test } from "vitest";
import {
  FAST,
  createPublicIp,
  networkId,
  rejection,
  seedNetwork,
  standardLoadBalancer,
  useTestbed,
} from "./testbed.ts";

const RG = "health-tests";
let vnetId: string;
let pipId: string;
const tb = useTestbed({}, async (tb) => {
  ({ vnetId } = await seedNetwork(tb, RG));
  pipId = await createPublicIp(tb, RG, "pip");
  await tb.network.loadBalancers.createOrUpdate(
    RG,
    "lb",
    standardLoadBalancer(tb, RG, "lb", pipId, vnetId),
    FAST,
  );
});

const health = async (rule: string): Promise<LoadBalancerHealthPerRule> =>
  await tb.network.loadBalancerLoadBalancingRules.health(RG, "lb", rule, FAST);
const ruleId = (rule: string) => `${networkId(tb, RG, "loadBalancers", "lb")}/loadBalancingRules/${rule}`;
const byAddress = (h: LoadBalancerHealthPerRule): Record<string, (string | undefined)[]> =>
  Object.fromEntries(
    (h.loadBalancerBackendAddresses ?? []).map((a): [string, (string | undefined)[]] => [
      a.ipAddress ?? "",
      [a.state, a.reason],
    ]),
  );

test("without a prober every member of the rule's pool is Up", async () => {
  const h = await health("tcp-80");
  expect(h).toMatchObject({ up: 2, down: 0 });
  expect(byAddress(h)).toEqual({
    "10.0.1.10": ["Up", "Up_Probe_Success"],
    "10.0.1.11": ["Up", "Up_Probe_Success"],
  });
  // ARM's long-running operation: the POST is accepted, its result read where the Location header says.
  expect(tb.azure.requestCounts()).toMatchObject({ "POST loadBalancers/loadBalancingRules/health": 1 });
});

test("a prober's verdicts are told per rule; a member it has not judged is Down", async () => {
  const put = await tb.arm("PUT", "/_emulator/ruleHealth", {
    rules: { [ruleId("tcp-80").toUpperCase()]: { "10.0.1.10": "Up", "10.0.1.11": "Down" } },
  });
  expect(put.status).toBe(200);
  expect(byAddress(await health("tcp-80"))).toEqual({
    "10.0.1.10": ["Up", "Up_Probe_Success"],
    "10.0.1.11": ["Down", "Down_Probe_Failure"],
  });
  expect(await health("tcp-443")).toMatchObject({ up: 0, down: 2 });
  // Back to no prober.
  await tb.arm("DELETE", "/_emulator/ruleHealth");
  expect(await health("tcp-443")).toMatchObject({ up: 2, down: 0 });
});

test("a member set administratively Down is Down whatever the probe says", async () => {
  const lb = standardLoadBalancer(tb, RG, "lb", pipId, vnetId);
  lb.backendAddressPools![0]!.loadBalancerBackendAddresses![1]!.adminState = "Down";
  await tb.network.loadBalancers.createOrUpdate(RG, "lb", lb, FAST);
  expect(byAddress(await health("tcp-80"))).toEqual({
    "10.0.1.10": ["Up", "Up_Probe_Success"],
    "10.0.1.11": ["Down", "Down_Admin"],
  });
});

test("a rule that does not exist is NotFound; a report of the wrong shape is refused", async () => {
  expect(await rejection(health("nope"))).toMatchObject({ status: 404 });
  const bad = await tb.arm("PUT", "/_emulator/ruleHealth", { rules: { x: { "10.0.1.10": "Healthy" } } });
  expect(bad.status).toBe(400);
  expect((bad.body!.error as { message: string }).message).toMatch(/must be "Up" or "Down"/);
  const get = await tb.arm("GET", `${ruleId("tcp-80")}/health?api-version=2026-01-01`);
  expect(get.status).toBe(405);
});
