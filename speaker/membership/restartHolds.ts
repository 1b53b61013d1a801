// How long the other speakers keep a restarting node's addresses where they are. A speaker replaced in place (its
// DaemonSet rolls) says `restarting` as it stops; its node goes on forwarding, and the neighbours' caches still
// send the addresses' traffic there, so moving the addresses would only cut every connection through the node,
// twice (away, then back once the new speaker is elected again). The others wait for its new speaker instead,
// for at most RESTART_HOLD_MS (by default): a replacement that never comes is then taken for a departure, as
// before. Pure.
import type { Fact } from "./messages.ts";

/** Long enough for the kubelet to start the replacement pod and its speaker to join on a busy node. */
export const RESTART_HOLD_MS = 30_000;

export class RestartHolds {
  private readonly holds = new Map<string, { incarnation: number; until: number }>();
  private readonly holdMs: number;

  constructor(holdMs = RESTART_HOLD_MS) {
    this.holdMs = holdMs;
  }

  /** A node said it restarts (the fact changed this speaker's view): its hold starts now. */
  noted(fact: Fact, now: number): void {
    if (fact.status === "restarting")
      this.holds.set(fact.node, { incarnation: fact.incarnation, until: now + this.holdMs });
  }

  /**
   * The holds over: each as the departure to merge (`left` at the incarnation that restarted). A hold whose node
   * came back or left (`current` no longer says restarting at that incarnation) simply ends.
   */
  expired(now: number, current: (node: string) => Fact | undefined): Fact[] {
    const over: Fact[] = [];
    for (const [node, hold] of this.holds) {
      const fact = current(node);
      if (fact?.status !== "restarting" || fact.incarnation !== hold.incarnation) this.holds.delete(node);
      else if (now >= hold.until) {
        this.holds.delete(node);
        over.push({ node, incarnation: hold.incarnation, status: "left" });
      }
    }
    return over;
  }
}
