// The election of speaker/l2/election.ts, made cheap to repeat. A node's rendezvous weight for an address never
// changes, so each address's nodes are ranked once (per set of known nodes) and every later election is a
// walk down that ranking to the first eligible node. Liveness changes, which must be acted on within
// milliseconds, then cost no hashing at all, even with a thousand nodes and a thousand addresses.
import { electionKey, rendezvousWeight } from "./election.ts";

/** Nodes by descending weight for `key`; equal weights by name, exactly as electAnnouncer breaks ties. */
export function rankNodes(key: string, nodes: Iterable<string>): string[] {
  const weighted = [...new Set(nodes)].map((node) => ({ node, weight: rendezvousWeight(node, key) }));
  weighted.sort((a, b) =>
    a.weight === b.weight ? (a.node < b.node ? -1 : 1) : a.weight > b.weight ? -1 : 1,
  );
  return weighted.map((w) => w.node);
}

export class RankingCache {
  private known = new Set<string>();
  private readonly rankings = new Map<string, string[]>();

  /** The nodes that can ever be elected (all known Nodes); a change drops every cached ranking. */
  setNodes(nodes: Iterable<string>): void {
    const next = new Set(nodes);
    if (next.size === this.known.size && [...next].every((n) => this.known.has(n))) return;
    this.known = next;
    this.rankings.clear();
  }

  /** The winner for `address` among `eligible`; eligible nodes unknown to the cache are ranked too. (Bound.) */
  readonly elect = (address: string, eligible: ReadonlySet<string>): string | undefined => {
    if (eligible.size === 0) return undefined;
    const key = electionKey(address);
    let ranking = this.rankings.get(key);
    if (!ranking || [...eligible].some((node) => !this.known.has(node))) {
      const all = new Set([...this.known, ...eligible]);
      ranking = rankNodes(key, all);
      if (all.size === this.known.size) this.rankings.set(key, ranking);
    }
    return ranking.find((node) => eligible.has(node));
  };

  /** Forgets addresses no longer announced, so the cache holds only live addresses. */
  retain(addresses: ReadonlySet<string>): void {
    for (const key of this.rankings.keys()) if (!addresses.has(key)) this.rankings.delete(key);
  }
}
