// Configuration mistakes that are not errors in any single pool but break the network when combined:
// two pools handing out the same addresses, or a pool containing an address a node already uses (the
// speaker would then answer ARP for the node's own address). The controller reports these as Events and
// pool conditions; nothing here decides what to do about them.
import { parseIP } from "../../shared/address.ts";
import { poolContains, type Pool } from "../../shared/pool.ts";
import { formatRange, rangeIntersection, type AddressRange } from "../../shared/range.ts";

export type PoolFinding =
  | {
      readonly kind: "PoolsOverlap";
      readonly pools: readonly [string, string];
      /** The shared addresses, e.g. "192.168.10.16-192.168.10.31". */
      readonly overlap: string;
      readonly message: string;
    }
  | {
      readonly kind: "NodeAddressInPool";
      readonly pool: string;
      readonly node: string;
      readonly address: string;
      readonly message: string;
    }
  | {
      /** Another host on the LAN answered a speaker's ARP probe for the address. */
      readonly kind: "AddressInUse";
      readonly pool: string;
      readonly address: string;
      readonly mac: string;
      readonly message: string;
    };

/** The pools holding each address another host on the LAN was found to use. */
export function findAddressesInUse(
  pools: readonly Pool[],
  inUse: readonly { readonly address: string; readonly mac: string; readonly since: string }[],
): PoolFinding[] {
  const findings: PoolFinding[] = [];
  for (const { address, mac, since } of inUse) {
    const parsed = parseIP(address);
    if (!parsed.ok) continue;
    for (const pool of pools) {
      if (!poolContains(pool, parsed.value)) continue;
      findings.push({
        kind: "AddressInUse",
        pool: pool.name,
        address,
        mac,
        message: `${address} is in use on the LAN by ${mac}, which is not a speaker (found ${since}): not handed out; remove it from that host or from the pool`,
      });
    }
  }
  return findings;
}

/** Every pair of pools sharing addresses, one finding per overlapping pair of ranges. */
export function findOverlappingPools(pools: readonly Pool[]): PoolFinding[] {
  const findings: PoolFinding[] = [];
  const sorted = [...pools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      const a = sorted[i];
      const b = sorted[j];
      if (!a || !b) continue;
      for (const overlap of overlaps(a.ranges, b.ranges)) {
        const text = formatRange(overlap);
        findings.push({
          kind: "PoolsOverlap",
          pools: [a.name, b.name],
          overlap: text,
          message:
            `IPAddressPools ${a.name} and ${b.name} both contain ${text}; ` +
            `remove the addresses from one of them so each address belongs to exactly one pool`,
        });
      }
    }
  }
  return findings;
}

function* overlaps(left: readonly AddressRange[], right: readonly AddressRange[]): Generator<AddressRange> {
  for (const a of left) {
    for (const b of right) {
      const overlap = rangeIntersection(a, b);
      if (overlap) yield overlap;
    }
  }
}

export interface NodeAddresses {
  readonly name: string;
  /** status.addresses values of type InternalIP/ExternalIP; anything unparsable is ignored. */
  readonly addresses: readonly string[];
}

/** Pools that could hand out an address a node already uses. */
export function findNodeAddressesInPools(
  pools: readonly Pool[],
  nodes: readonly NodeAddresses[],
): PoolFinding[] {
  const findings: PoolFinding[] = [];
  for (const node of nodes) {
    for (const text of node.addresses) {
      const parsed = parseIP(text);
      if (!parsed.ok) continue;
      for (const pool of pools) {
        if (!poolContains(pool, parsed.value)) continue;
        findings.push({
          kind: "NodeAddressInPool",
          pool: pool.name,
          node: node.name,
          address: parsed.value.text,
          message:
            `IPAddressPool ${pool.name} contains ${parsed.value.text}, an address of node ${node.name}; ` +
            `exclude it from spec.addresses (split the range around it) so no Service is given it`,
        });
      }
    }
  }
  return findings;
}
