// The second stage of an AWS pass, pure: the Service's desired NLB from its intent and what resolve.ts read, with
// the rules that admit it to its targets. Never changed afterwards: the shared backend group and the names of
// resources taken over from the AWS Load Balancer Controller are the pass's later stages, and each makes a new
// desired load balancer from this one (withSharedGroup here, renamed in lbc/adoption.ts).
import type { LoadBalancerIntent } from "../provider.ts";
import type { BackendRule, DesiredLoadBalancer, Network } from "./model.ts";
import { backendNeeds, cidrBackendRules } from "./securityGroups/backendRules.ts";
import { checkBackendGroupRules, checkOwnGroupRules } from "./securityGroups/ruleLimit.ts";
import { desiredLoadBalancer } from "./loadBalancer/desired.ts";
import type { Resolved } from "./resolve.ts";
import type { SharedUse } from "./securityGroups/sharedBackend.ts";

export interface Built {
  desired: DesiredLoadBalancer;
  /** What the Service asks of the cluster's shared backend group, or null when it has none. */
  shared: SharedUse | null;
}

export function build(intent: LoadBalancerIntent, resolved: Resolved, cluster: string): Built {
  const { settings, network, backend } = resolved;
  const lb = desiredLoadBalancer(intent, settings, network, cluster);
  // The rule count again, now that the prefix lists' weights are known.
  if (lb.securityGroup && resolved.prefixLists)
    checkOwnGroupRules(
      intent,
      lb.securityGroup.ingress,
      settings.rulesPerSecurityGroup,
      resolved.prefixLists,
    );
  if (!backend) return { desired: lb, shared: null };
  if (settings.disableNlbSg) {
    // No group to name: the rules name the NLB's subnets and the clients' addresses instead.
    const backendRules: BackendRule[] = cidrBackendRules(lb.targetGroups, backend.groups, {
      scheme: settings.scheme,
      subnetCidrs: subnetCidrs(network, lb.subnets),
      vpcCidrs: backend.vpcCidrs ?? { ipv4: [], ipv6: [] },
      sourceRanges: intent.sourceRanges,
    });
    checkBackendGroupRules(intent, backendRules, settings.rulesPerSecurityGroup);
    return { desired: { ...lb, backendRules }, shared: null };
  }
  return {
    desired: lb,
    shared: { vpcId: network.vpcId, needs: backendNeeds(lb.targetGroups, backend.groups) },
  };
}

/** The NLB joins the cluster's shared backend group, which its targets' groups admit (securityGroups/sharedBackend.ts). */
export function withSharedGroup(
  desired: DesiredLoadBalancer,
  groupId: string | undefined,
): DesiredLoadBalancer {
  return groupId ? { ...desired, sharedBackendGroup: groupId } : desired;
}

function subnetCidrs(network: Network, subnets: string[]): { ipv4: string[]; ipv6: string[] } {
  return {
    ipv4: subnets.flatMap((s) => network.cidrs?.[s]?.ipv4 ?? []),
    ipv6: subnets.flatMap((s) => network.cidrs?.[s]?.ipv6 ?? []),
  };
}
