// Which nodes may announce a pool's addresses: the pool's `nodeSelectors`, with the meaning of MetalLB's
// L2Advertisement nodeSelectors, so a pool moved over from MetalLB is announced from the same nodes.
import { matchesLabelSelector, type LabelSelector, type Labels } from "../shared/labelSelector.ts";

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
