// The emulated NLB data path, as pure functions of what ELBv2 holds (moto's load balancers, listeners, target
// groups and targets) and of the targets' health as the health checks judge it (checkPlan.ts): the kernel's
// forwarding (iptables NAT rules, one chain per listener, spreading new flows over the healthy targets as
// kube-proxy does) and the NLBs' security groups. Nothing here does I/O.
import { shortHash, stateKey, type TargetState } from "./checkPlan.ts";
import {
  kernelProtocols,
  preservesClientIp,
  type EdgeLoadBalancer,
  type EdgeTargetGroup,
} from "./nlbModel.ts";
import { LAN_CIDR } from "./addresses.ts";
import { proxied } from "./proxyPlan.ts";
import { spreadRules, stickySpreadRules } from "./spread.ts";
import { targetSecurityRules } from "./targetSecurity.ts";

/**
 * The targets that get new flows: ELBv2 routes to a new target only once it has passed its initial checks, and
 * fails open (to every target) only when all of them fail their checks.
 */
export function forwardedTargets(
  group: EdgeTargetGroup,
  states: ReadonlyMap<string, TargetState>,
): EdgeTargetGroup["targets"] {
  const state = (t: { ip: string; port: number }) => states.get(stateKey(group.arn, t));
  const healthy = group.targets.filter((t) => state(t) === "healthy");
  const allFailing = group.targets.every((t) => state(t) === "unhealthy");
  return healthy.length ? healthy : allFailing ? group.targets : [];
}

/** Marks a new flow whose target group does not preserve the client's address. */
const FROM_NLB_MARK = "0x1";

/**
 * The kernel's forwarding for every listener, as iptables-restore input for the edge's nat table: new flows to an
 * NLB address and listener port are spread evenly over the healthy targets (or, as ELBv2 fails open, over all of
 * them when every one fails its checks); with source-IP stickiness a client goes back to its target while that
 * target is forwarded to (the kernel's `recent` lists, as kube-proxy keeps ClientIP affinity). They keep the client's address when the target group preserves it, or
 * leave from the NLB's own address when it does not (marked here, translated on the way out). A client on the
 * targets' own LAN is the exception: the targets would answer it directly, past the edge, so its flows leave from
 * the edge's address; clients elsewhere (the internet client behind the edge) are seen as themselves.
 */
export function iptablesRules(
  balancers: readonly EdgeLoadBalancer[],
  groups: ReadonlyMap<string, EdgeTargetGroup>,
  states: ReadonlyMap<string, TargetState>,
): string {
  const chains: string[] = [];
  const rules: string[] = [];
  const fromNlb = new Set<string>();
  for (const lb of [...balancers].sort((a, b) => a.arn.localeCompare(b.arn))) {
    for (const listener of lb.listeners) {
      const group = groups.get(listener.targetGroupArn);
      if (!group) continue;
      // The proxy carries it (proxyPlan.ts).
      if (proxied(listener, group)) continue;
      const targets = forwardedTargets(group, states);
      const protocols = kernelProtocols(listener);
      // No target to send to (none registered, or none past its initial checks): no rule, so the edge itself
      // refuses the connection, as an NLB resets it.
      if (!targets.length) continue;
      for (const protocol of protocols) {
        const chain = `EDGE-${shortHash(`${lb.arn}|${listener.port}|${protocol}`)}`.toUpperCase();
        chains.push(`:${chain} - [0:0]`);
        for (const address of lb.addresses)
          rules.push(
            `-A EDGE-LISTENERS -d ${address}/32 -p ${protocol} --dport ${listener.port} -j ${chain}`,
          );
        if (!preservesClientIp(group)) {
          rules.push(`-A ${chain} -j MARK --set-mark ${FROM_NLB_MARK}`);
          for (const address of lb.addresses)
            fromNlb.add(
              `-A POSTROUTING -m mark --mark ${FROM_NLB_MARK} -m conntrack --ctorigdst ${address}/32 -j SNAT --to-source ${address}`,
            );
        }
        const dnat = (i: number) => `-j DNAT --to-destination ${targets[i]!.ip}:${targets[i]!.port}`;
        if (!sticky(group)) {
          rules.push(...spreadRules(chain, `-p ${protocol}`, targets.length, dnat));
          continue;
        }
        // Source-IP stickiness: one list per group and target, whichever listener the client came by.
        const key = (i: number) => `${group.arn}|${targets[i]!.ip}:${targets[i]!.port}`;
        const stuck = stickySpreadRules(chain, `-p ${protocol}`, targets.length, key, dnat);
        chains.push(...stuck.chains);
        rules.push(...stuck.rules);
      }
    }
  }
  return [
    ...securityGroupRules(balancers),
    "*nat",
    ":PREROUTING ACCEPT [0:0]",
    ":INPUT ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":POSTROUTING ACCEPT [0:0]",
    ":EDGE-LISTENERS - [0:0]",
    ...chains,
    "-A PREROUTING -j EDGE-LISTENERS",
    ...rules,
    ...fromNlb,
    `-A POSTROUTING -s ${LAN_CIDR} -m conntrack --ctstate DNAT -j MASQUERADE`,
    "COMMIT",
    ...targetSecurityRules(balancers, groups),
    "",
  ].join("\n");
}

/** ELBv2's source-IP stickiness (`stickiness.enabled` with `stickiness.type` source_ip). */
function sticky(group: EdgeTargetGroup): boolean {
  const a = group.attributes ?? {};
  return a["stickiness.enabled"] === "true" && (a["stickiness.type"] ?? "source_ip") === "source_ip";
}

/**
 * The NLBs' security groups, as iptables-restore input for the edge's mangle table (before any address is
 * translated): for each address and listener, the sources some inbound rule admits return, everything else is
 * dropped. Replies come back to the edge's own address, so they never meet these rules.
 */
function securityGroupRules(balancers: readonly EdgeLoadBalancer[]): string[] {
  const rules: string[] = [];
  for (const lb of [...balancers].sort((a, b) => a.arn.localeCompare(b.arn))) {
    if (!lb.ingress) continue;
    for (const listener of lb.listeners) {
      const protocols = kernelProtocols(listener);
      for (const protocol of protocols) {
        const admitting = lb.ingress.filter(
          (r) =>
            (r.protocol === "-1" || r.protocol === protocol) &&
            (r.protocol === "-1" || (r.fromPort <= listener.port && listener.port <= r.toPort)),
        );
        for (const address of lb.addresses) {
          const match = `-d ${address}/32 -p ${protocol} --dport ${listener.port}`;
          for (const cidr of [...new Set(admitting.flatMap((r) => (r.cidr ? [r.cidr] : [])))]
            .filter((c) => !c.includes(":"))
            .sort())
            rules.push(`-A EDGE-SECURITY-GROUPS ${match} -s ${cidr} -j RETURN`);
          rules.push(`-A EDGE-SECURITY-GROUPS ${match} -j DROP`);
        }
      }
    }
  }
  return [
    "*mangle",
    ":PREROUTING ACCEPT [0:0]",
    ":EDGE-SECURITY-GROUPS - [0:0]",
    "-A PREROUTING -j EDGE-SECURITY-GROUPS",
    ...rules,
    "COMMIT",
  ];
}
