// ELBv2's deregistration, as a pure function of the target groups seen pass after pass and the clock: a target
// that leaves its group is `draining` for the group's `deregistration_delay.timeout_seconds` (300 by default). It
// gets no new flows (it is no longer among the forwarded targets) while the flows it has go on (the kernel's
// connection tracking keeps their translation). ELBv2 ends the drain early when the target has no connection left,
// and at the end closes what is still open only when `deregistration_delay.connection_termination.enabled` is true.
// A target registered again while draining is simply registered (its registration starts over, registration.ts).
import { stateKey } from "./checkPlan.ts";
import type { EdgeTargetGroup } from "./nlbModel.ts";

/** ELBv2's default deregistration delay, in seconds. */
export const DEFAULT_DEREGISTRATION_DELAY_SECONDS = 300;

export interface DrainingTarget {
  group: string;
  id: string;
  ip: string;
  port: number;
  /** When the drain ends, at the latest (ms since the epoch). */
  until: number;
  /** Whether the flows still open are cut when it ends. */
  terminate: boolean;
}

/** The drain's settings of a target group, from its attributes. */
export function drainSettings(group: EdgeTargetGroup): { delayMs: number; terminate: boolean } {
  const seconds = Number(
    group.attributes?.["deregistration_delay.timeout_seconds"] ?? DEFAULT_DEREGISTRATION_DELAY_SECONDS,
  );
  return {
    delayMs: (Number.isFinite(seconds) ? seconds : DEFAULT_DEREGISTRATION_DELAY_SECONDS) * 1000,
    terminate: group.attributes?.["deregistration_delay.connection_termination.enabled"] === "true",
  };
}

/** "ip:port", how the kernel's flows name a target and a load balancer's listener. */
export const flowKey = (t: { ip: string; port: number }) => `${t.ip}:${t.port}`;

/** An open flow as connection tracking holds it: where the client sent it, and the target that answers it. */
export interface Flow {
  /** The client's destination: an NLB's address and listener port (or, from the edge's own proxy, the target). */
  to: string;
  target: string;
}

export class Drains {
  /** The targets registered at the last step, by target group. */
  private registered = new Map<string, EdgeTargetGroup["targets"]>();
  private readonly draining = new Map<string, DrainingTarget>();

  /**
   * One pass: targets gone from their group since the last step start draining; drains end when due, when the
   * target is registered again, when its group is gone, or when it has no flow left (`hasFlow`: whether a flow
   * through the group's listeners still goes to it). Returns the targets draining now and the drains that ended on their delay
   * (those whose flows the edge must cut when `terminate`).
   */
  step(
    groups: ReadonlyMap<string, EdgeTargetGroup>,
    now: number,
    hasFlow: (target: DrainingTarget) => boolean,
  ): { draining: DrainingTarget[]; expired: DrainingTarget[] } {
    for (const [arn, before] of this.registered) {
      const group = groups.get(arn);
      if (!group) continue;
      const still = new Set(group.targets.map((t) => stateKey(arn, t)));
      const { delayMs, terminate } = drainSettings(group);
      for (const t of before) {
        const key = stateKey(arn, t);
        if (still.has(key) || this.draining.has(key)) continue;
        this.draining.set(key, {
          group: arn,
          id: t.id,
          ip: t.ip,
          port: t.port,
          until: now + delayMs,
          terminate,
        });
      }
    }
    const expired: DrainingTarget[] = [];
    for (const [key, d] of this.draining) {
      const group = groups.get(d.group);
      const back = group?.targets.some((t) => stateKey(d.group, t) === key);
      if (!group || back || !hasFlow(d)) this.draining.delete(key);
      else if (now >= d.until) {
        this.draining.delete(key);
        expired.push(d);
      }
    }
    this.registered = new Map([...groups].map(([arn, g]) => [arn, g.targets]));
    return { draining: [...this.draining.values()], expired };
  }
}

/** TCP states of a flow that is over: the connection no longer counts as open. */
const CLOSED_STATES = new Set(["TIME_WAIT", "CLOSE"]);

/**
 * The open flows, from `conntrack -L` output: a line's first `dst=`/`dport=` are where the client sent it, the
 * second `src=`/`sport=` the target that answers (its address and port after translation).
 */
export function openFlows(conntrack: string): Flow[] {
  const out: Flow[] = [];
  for (const line of conntrack.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[0] === "tcp" && CLOSED_STATES.has(fields[3] ?? "")) continue;
    const values = (name: string) =>
      fields.filter((f) => f.startsWith(`${name}=`)).map((f) => f.slice(name.length + 1));
    const [dst, src, dport, sport] = [
      values("dst")[0],
      values("src")[1],
      values("dport")[0],
      values("sport")[1],
    ];
    if (dst && src && dport && sport) out.push({ to: `${dst}:${dport}`, target: `${src}:${sport}` });
  }
  return out;
}
