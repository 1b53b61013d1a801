// The targets' own security groups, as EC2 enforces them on an NLB's traffic and health checks: a target receives
// a flow from an NLB only on a port some inbound rule of its groups opens to the NLB — by naming one of the NLB's
// security groups, or by an address range holding the NLB's address — and the same for the health checks on the
// health-check port. What no rule opens is dropped, so the checks fail and the traffic goes nowhere. Targets
// whose groups the edge does not know (pods without network interfaces in the emulator) admit everything. Pure.
import { Address4 } from "ip-address";
import {
  kernelProtocols,
  type EdgeIngressRule,
  type EdgeLoadBalancer,
  type EdgeTargetGroup,
} from "./nlbModel.ts";
import { proxied } from "./proxyPlan.ts";

/** Whether `rules` open `protocol`/`port` to an NLB with these security groups, at this address. */
export function admits(
  rules: readonly EdgeIngressRule[],
  protocol: "tcp" | "udp",
  port: number,
  from: { securityGroups: readonly string[]; address: string },
): boolean {
  return rules.some(
    (r) =>
      (r.protocol === "-1" || r.protocol === protocol) &&
      (r.protocol === "-1" || (r.fromPort <= port && port <= r.toPort)) &&
      ((r.group !== undefined && from.securityGroups.includes(r.group)) ||
        (r.cidr !== undefined && holds(r.cidr, from.address))),
  );
}

/**
 * iptables-restore input for the edge's filter table: an NLB's flows to a target port its groups do not open are
 * dropped after translation (told apart by the NLB address they were sent to), and so are the health checks,
 * which HAProxy sends from the edge itself, to a health-check port they do not open to any NLB using the group,
 * and the connections the listener proxy opens from an NLB's address (proxyPlan.ts) to a port not opened to it.
 */
export function targetSecurityRules(
  balancers: readonly EdgeLoadBalancer[],
  groups: ReadonlyMap<string, EdgeTargetGroup>,
): string[] {
  const forward = new Set<string>();
  const proxiedOut = new Set<string>();
  const checks = new Map<string, boolean>();
  for (const lb of [...balancers].sort((a, b) => a.arn.localeCompare(b.arn)))
    for (const listener of lb.listeners) {
      const group = groups.get(listener.targetGroupArn);
      if (!group) continue;
      for (const address of lb.addresses) {
        const from = { securityGroups: lb.securityGroups ?? [], address };
        for (const t of group.targets) {
          if (!t.ingress) continue;
          for (const protocol of kernelProtocols(listener))
            if (!admits(t.ingress, protocol, t.port, from))
              if (proxied(listener, group))
                // The proxy's own connection, from the NLB's address.
                proxiedOut.add(
                  `-A EDGE-TARGET-CHECKS -s ${address}/32 -d ${t.ip}/32 -p tcp --dport ${t.port} -j DROP`,
                );
              else
                forward.add(
                  `-A EDGE-TARGET-GROUPS -m conntrack --ctorigdst ${address}/32 -d ${t.ip}/32 -p ${protocol} --dport ${t.port} -j DROP`,
                );
          const hc = group.healthCheck.port === "traffic-port" ? t.port : Number(group.healthCheck.port);
          const key = `${t.ip}|${hc}`;
          checks.set(key, (checks.get(key) ?? false) || admits(t.ingress, "tcp", hc, from));
        }
      }
    }
  const output = [...checks]
    .filter(([, admitted]) => !admitted)
    .map(([key]) => {
      const [ip, port] = key.split("|");
      return `-A EDGE-TARGET-CHECKS -d ${ip}/32 -p tcp --dport ${port} -j DROP`;
    });
  return [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":FORWARD ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":EDGE-TARGET-GROUPS - [0:0]",
    ":EDGE-TARGET-CHECKS - [0:0]",
    "-A FORWARD -m conntrack --ctstate NEW -j EDGE-TARGET-GROUPS",
    "-A OUTPUT -j EDGE-TARGET-CHECKS",
    ...[...forward].sort(),
    ...[...proxiedOut].sort(),
    ...output.sort(),
    "COMMIT",
  ];
}

function holds(cidr: string, address: string): boolean {
  try {
    return new Address4(address).isInSubnet(new Address4(cidr));
  } catch {
    return false;
  }
}
