// Which pods an Azure load balancer finds healthy, for their readiness gates: ARM's per-rule health (POST
// .../loadBalancingRules/{rule}/health, a long-running operation answering each backend address Up or Down, as
// the rule's probe judges it). Read only for IP-based pools (the members are the pods) and only while some pod
// waits for its gate: an LRO per rule is too dear to read on every resync for nothing.
import type { LoadBalancerIntent } from "../../provider.ts";
import { call, isNotFound, type AzureClients } from "../arm/clients.ts";
import type { DesiredService } from "../model.ts";

/** One rule's answer: each backend address and its state ("Up", "Down"). */
export type RuleMembers = ReadonlyMap<string, string>;

/**
 * The addresses Up in every rule that sends to them: a pod serving several ports takes traffic on all of them
 * only once each rule's probe passes it. A rule with no answer (just made, not found yet) passes nobody.
 */
export function upInEveryRule(rules: readonly (RuleMembers | undefined)[]): string[] {
  if (rules.length === 0) return [];
  const addresses = new Set(rules.flatMap((r) => [...(r?.keys() ?? [])]));
  return [...addresses].filter((ip) => rules.every((r) => r?.get(ip) === "Up")).sort();
}

/** Whether any pod behind the Service waits for its gate, so that its health is worth reading. */
export const podsAwaitGates = (intent: LoadBalancerIntent): boolean =>
  intent.endpoints.some((e) => e.awaitingGate !== undefined);

/**
 * The addresses Up in every rule of their own side: a dual-stack Service's sides have their own rules and pools,
 * an IPv4 address in one and an IPv6 address in the other, so each side is judged apart (`sides[i]`: the answers
 * of side i's rules).
 */
export function upBySide(sides: readonly (readonly (RuleMembers | undefined)[])[]): string[] {
  return sides.flatMap((rules) => upInEveryRule(rules)).sort();
}

/** The pods (endpoint addresses) every rule of their family's side reports Up. */
export async function healthyPods(
  clients: AzureClients,
  sides: readonly DesiredService[],
): Promise<string[]> {
  // Each read is a long-running operation of its own (at least one poll interval): asked all at once.
  const answers = await Promise.all(
    sides.map((side) => Promise.all(side.rules.map((rule) => ruleMembers(clients, side, rule.name)))),
  );
  return upBySide(answers);
}

async function ruleMembers(
  clients: AzureClients,
  side: DesiredService,
  rule: string,
): Promise<RuleMembers | undefined> {
  const { resourceGroup, name } = side.loadBalancer;
  try {
    const health = await call("loadBalancingRules:health", () =>
      clients.network.loadBalancerLoadBalancingRules
        .health(resourceGroup, name, rule, { updateIntervalInMs: clients.pollIntervalMs })
        .then((h) => h),
    );
    return new Map(
      (health.loadBalancerBackendAddresses ?? []).flatMap((a) =>
        a.ipAddress ? [[a.ipAddress, a.state ?? ""] as const] : [],
      ),
    );
  } catch (err) {
    // A rule whose write has not landed yet: nobody is Up behind it so far.
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
