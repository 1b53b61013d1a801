// Which nodes may announce a pool's addresses: the pool's `nodeSelectors`, with the meaning of MetalLB's
// L2Advertisement nodeSelectors, so a pool moved over from MetalLB is announced from the same nodes.
import type { V1Node } from "@kubernetes/client-node";
import { matchesLabelSelector, type LabelSelector, type Labels } from "../providers/metal/labelSelector.ts";

/**
 * One entry of a pool's nodeSelectors; null stands for an entry the speaker could not read, which selects
 * no node: an unreadable restriction must not widen into "every node".
 */
export type NodeSelector = LabelSelector | null;

/** A node matching any selector may announce (OR); an empty list lets every node announce. */
export function nodeMayAnnounce(selectors: readonly NodeSelector[], labels: Labels): boolean {
  if (selectors.length === 0) return true;
  return selectors.some((selector) => selector !== null && matchesLabelSelector(selector, labels));
}

/**
 * For each pool that restricts its announcers, the names of the nodes allowed to announce its addresses.
 * Pools without node selectors are absent: any node may announce them.
 */
export function nodesByPool(
  pools: readonly { readonly name: string; readonly nodeSelectors: readonly NodeSelector[] }[],
  nodes: readonly V1Node[],
): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  for (const pool of pools) {
    if (pool.nodeSelectors.length === 0) continue;
    const allowed = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata?.name;
      if (name && nodeMayAnnounce(pool.nodeSelectors, node.metadata?.labels ?? {})) allowed.add(name);
    }
    result.set(pool.name, allowed);
  }
  return result;
}
