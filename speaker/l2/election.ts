// Which node announces an address, decided without any coordination between speakers: rendezvous
// (highest-random-weight) hashing. Every speaker scores each eligible node for the address with the same
// stable hash and picks the highest score, so all speakers that see the same eligible nodes agree, and a
// node joining or leaving moves only the addresses that node wins or loses.
import { hash } from "node:crypto";
import { canonicalIP } from "../../shared/address.ts";

/**
 * The first 64 bits (big-endian) of SHA-256 over "node NUL address". SHA-256 is used for being fully
 * specified and identical on every platform and Node version, not for secrecy; NUL cannot occur in node
 * names or addresses, so no two (node, address) pairs hash the same input.
 */
export function rendezvousWeight(node: string, address: string): bigint {
  return hash("sha256", `${node}\u0000${address}`, "buffer").readBigUInt64BE(0);
}

/** Addresses are compared in canonical form, so "fd00::0001" and "fd00::1" elect the same node. */
export function electionKey(address: string): string {
  return canonicalIP(address.trim()) ?? address;
}

/** The node that announces `address`, or undefined when no node is eligible. */
export function electAnnouncer(address: string, eligibleNodes: Iterable<string>): string | undefined {
  return electByKey(electionKey(address), eligibleNodes);
}

function electByKey(key: string, eligibleNodes: Iterable<string>): string | undefined {
  let winner: string | undefined;
  let best = -1n;
  for (const node of new Set(eligibleNodes)) {
    const weight = rendezvousWeight(node, key);
    // A 64-bit tie is practically impossible, but the answer must not depend on input order even then.
    if (weight > best || (weight === best && winner !== undefined && node < winner)) {
      winner = node;
      best = weight;
    }
  }
  return winner;
}

export type EligibleNodes = Iterable<string> | ((address: string) => Iterable<string>);

/**
 * The announcer of every address, keyed by canonical address. Eligibility may differ per address
 * (with externalTrafficPolicy Local only nodes with a ready endpoint qualify), hence the function form.
 */
export function electAnnouncers(
  addresses: Iterable<string>,
  eligible: EligibleNodes,
): Map<string, string | undefined> {
  const result = new Map<string, string | undefined>();
  const shared = typeof eligible === "function" ? undefined : [...eligible];
  for (const address of addresses) {
    const key = electionKey(address);
    if (result.has(key)) continue;
    const nodes = typeof eligible === "function" ? eligible(key) : (shared ?? []);
    result.set(key, electByKey(key, nodes));
  }
  return result;
}

/** The addresses `node` must announce under an election result, sorted. */
export function addressesWonBy(node: string, announcers: ReadonlyMap<string, string | undefined>): string[] {
  const won: string[] = [];
  for (const [address, winner] of announcers) if (winner === node) won.push(address);
  return won.sort();
}
