// The rules that let the NLBs of a cluster reach their targets, shared by every Service as the AWS Load Balancer
// Controller shares them: each NLB carries one security group common to the cluster (per VPC), and each backend
// group (the nodes', or the pods' interfaces') admits that group with one rule per protocol, whose port range spans
// every port any Service needs there. One rule per protocol and group, however many Services: EC2 allows 60 rules
// per group by default, and one rule per Service port would run out at about the 60th Service. Pure.

/** A port that a Service's targets need open on a backend group, to the shared group. */
export interface BackendNeed {
  groupId: string;
  protocol: "tcp" | "udp";
  port: number;
}

/** One shared rule: the backend group admits the shared group on a range of ports. */
export interface PortRange {
  groupId: string;
  protocol: "tcp" | "udp";
  from: number;
  to: number;
}

export interface ObservedRange extends PortRange {
  ruleId: string;
  /** The group the rule admits (the shared group it was made for). */
  source: string;
}

export const rangeKey = (r: { groupId: string; protocol: string }) => `${r.groupId}/${r.protocol}`;
export const describeRange = (r: PortRange) =>
  `${r.groupId} ${r.protocol} ${r.from === r.to ? r.from : `${r.from}-${r.to}`}`;

/** Per backend group and protocol, the smallest range holding every port any Service needs. */
export function wantedRanges(needs: Iterable<readonly BackendNeed[]>): PortRange[] {
  const ranges = new Map<string, PortRange>();
  for (const list of needs) {
    for (const n of list) {
      const key = rangeKey(n);
      const r = ranges.get(key);
      if (!r) ranges.set(key, { groupId: n.groupId, protocol: n.protocol, from: n.port, to: n.port });
      else {
        r.from = Math.min(r.from, n.port);
        r.to = Math.max(r.to, n.port);
      }
    }
  }
  return [...ranges.values()].sort((a, b) => rangeKey(a).localeCompare(rangeKey(b)));
}

export interface RangePlan {
  /** Added first, so that traffic allowed by a rule being replaced is never refused in between. */
  authorize: PortRange[];
  revoke: ObservedRange[];
}

/**
 * From the rules in place (all admitting `source`) to the wanted ones. Until every Service's needs are known
 * (`complete` false, e.g. just after a restart) nothing is narrowed or revoked: a range only grows to hold what
 * is wanted as well as what is there, since a Service not yet looked at may rely on it.
 */
export function planRanges(wanted: PortRange[], observed: ObservedRange[], complete: boolean): RangePlan {
  const byKey = new Map<string, ObservedRange[]>();
  for (const o of observed) byKey.set(rangeKey(o), [...(byKey.get(rangeKey(o)) ?? []), o]);
  const plan: RangePlan = { authorize: [], revoke: [] };
  const wantedKeys = new Set<string>();
  for (const w of wanted) {
    const key = rangeKey(w);
    wantedKeys.add(key);
    const present = byKey.get(key) ?? [];
    const target = complete ? { ...w } : hull(w, present);
    const exact = present.find((o) => o.from === target.from && o.to === target.to);
    if (!exact) plan.authorize.push(target);
    // Whatever else is there lies inside the target (or is no longer needed): one rule is enough.
    plan.revoke.push(...present.filter((o) => o !== exact));
  }
  if (complete) for (const [key, present] of byKey) if (!wantedKeys.has(key)) plan.revoke.push(...present);
  return plan;
}

function hull(w: PortRange, present: PortRange[]): PortRange {
  return {
    ...w,
    from: Math.min(w.from, ...present.map((p) => p.from)),
    to: Math.max(w.to, ...present.map((p) => p.to)),
  };
}

/** Whether the rules in place already admit every port this Service needs. */
export function covers(observed: PortRange[], needs: readonly BackendNeed[]): boolean {
  return needs.every((n) =>
    observed.some((o) => rangeKey(o) === rangeKey(n) && o.from <= n.port && n.port <= o.to),
  );
}
