// One speaker's view of which speakers are alive: a SWIM-style state per node, merged with the same rule
// on every speaker so that views converge whatever order news arrives in. Pure (no clock, no sockets).
//
// Ordering of beliefs about one node: higher incarnation wins; at equal incarnation
// left > restarting > dead > alive. Only the node itself raises its incarnation, to refute a false death, so a
// live node always overrides rumours of its death, and a restarted node (new incarnation = start time) overrides
// its old death. A restarting node is a member (it keeps its addresses) but not on the ring (nobody probes it,
// since its process is gone); `restarting` outranks `dead` so that a node that missed the news and found the
// process gone learns it from the next exchange of views instead of taking the addresses.
import { createHash } from "node:crypto";
import type { Fact, MemberStatus } from "./messages.ts";

const RANK: Record<MemberStatus, number> = { alive: 0, dead: 1, restarting: 2, left: 3 };

export function supersedes(next: Fact, current: Fact | undefined): boolean {
  if (!current) return true;
  if (next.incarnation !== current.incarnation) return next.incarnation > current.incarnation;
  return RANK[next.status] > RANK[current.status];
}

export type MergeOutcome =
  /** Nothing new. */
  | "unchanged"
  /** The view changed; `liveChanged` tells whether the live set did. */
  | "changed"
  /** Someone believes this node dead, left or newer than it is: it must announce a higher incarnation. */
  | "refute";

export class MembershipView {
  readonly self: string;
  private selfIncarnation: number;
  private readonly facts = new Map<string, Fact>();

  constructor(self: string, incarnation: number) {
    this.self = self;
    this.selfIncarnation = incarnation;
  }

  get incarnation(): number {
    return this.selfIncarnation;
  }

  selfFact(status: MemberStatus = "alive"): Fact {
    return { node: this.self, incarnation: this.selfIncarnation, status };
  }

  /** Applies a belief from the network (or from this node's own failure detector). */
  merge(fact: Fact): MergeOutcome {
    if (fact.node === this.self) {
      const contradicts =
        fact.incarnation > this.selfIncarnation ||
        (fact.incarnation === this.selfIncarnation && fact.status !== "alive");
      if (!contradicts) return "unchanged";
      this.selfIncarnation = fact.incarnation + 1;
      return "refute";
    }
    if (!supersedes(fact, this.facts.get(fact.node))) return "unchanged";
    this.facts.set(fact.node, fact);
    return "changed";
  }

  get(node: string): Fact | undefined {
    return node === this.self ? this.selfFact() : this.facts.get(node);
  }

  isAlive(node: string): boolean {
    return node === this.self || this.facts.get(node)?.status === "alive";
  }

  /** Live nodes including this one, sorted by name: the ring of probes. */
  live(): string[] {
    return this.withStatus("alive");
  }

  /** The nodes that hold addresses: the live ones and those whose speaker is restarting in place. */
  members(): string[] {
    return this.withStatus("alive", "restarting");
  }

  private withStatus(...statuses: MemberStatus[]): string[] {
    const names = [this.self];
    for (const fact of this.facts.values()) if (statuses.includes(fact.status)) names.push(fact.node);
    return names.sort();
  }

  /** Everything this node believes, itself included: what a full-view exchange sends. */
  allFacts(): Fact[] {
    return [this.selfFact(), ...this.facts.values()];
  }

  /** Drops beliefs about nodes that no longer exist in Kubernetes. */
  retain(nodes: ReadonlySet<string>): boolean {
    let changed = false;
    for (const node of this.facts.keys()) {
      if (!nodes.has(node)) {
        this.facts.delete(node);
        changed = true;
      }
    }
    return changed;
  }

  /**
   * Summary of the members with incarnations (a restarting one marked so): equal digests mean equal live sets
   * and equal holds.
   */
  digest(): string {
    const hash = createHash("sha256");
    for (const node of this.members()) {
      const fact = this.get(node);
      const mark = fact?.status === "restarting" ? "\u0000restarting" : "";
      hash.update(`${node}\u0000${fact?.incarnation ?? 0}${mark}\u0000`);
    }
    return hash.digest("base64").slice(0, 16);
  }

  /**
   * The `count` live nodes after this one on the ring of live node names: the nodes this one probes. Every
   * live node is probed by its `count` predecessors, so a failure is seen by several nodes at once.
   */
  successors(count: number): string[] {
    return ringNeighbours(this.live(), this.self, count, 1);
  }

  /** The `count` live nodes before this one: the nodes that probe this one. */
  predecessors(count: number): string[] {
    return ringNeighbours(this.live(), this.self, count, -1);
  }
}

function ringNeighbours(ring: readonly string[], self: string, count: number, step: 1 | -1): string[] {
  const start = ring.indexOf(self);
  const result: string[] = [];
  for (let i = 1; i < ring.length && result.length < count; i++) {
    const node = ring[(((start + step * i) % ring.length) + ring.length) % ring.length];
    if (node !== undefined && node !== self) result.push(node);
  }
  return result;
}
