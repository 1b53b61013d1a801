// Which configured load balancer's node pool each node is in, with several Standard load balancers
// (lbConfigurations.ts). As cloud-provider-azure: a node of a load balancer's primary VM set (or AKS agent pool)
// is that one's; any other node goes to one of those whose nodeSelector matches it, or, matching none, to one of
// those without a nodeSelector. Each node is on one load balancer only, so Azure's rules-per-backend limit counts
// only that one's rules. Where upstream picks the one with the fewest nodes it has remembered, Portico ranks the
// candidates by a hash of the node's and the load balancer's names (rendezvous hashing): the same answer in every
// reconcile and after restarts, with nothing remembered, nodes spread evenly, and a configuration added or
// removed moves only the nodes that it gains or loses. Pure.
import { createHash } from "node:crypto";
import type { NodeTarget } from "../../provider.ts";
import { matchesLabelSelector, type LabelSelector } from "../../../shared/labelSelector.ts";
import type { LoadBalancerConfiguration } from "./lbConfigurations.ts";

/**
 * A node as the provider sees it. `labels` are read when the controller passes them (nodeSelector and the
 * agent pool label need them); without them, nodes are placed by their VM scale set alone.
 */
export type PlacedNode = NodeTarget & { labels?: Readonly<Record<string, string>> };

/** The label AKS puts on each node naming its agent pool. */
export const AGENT_POOL_LABEL = "kubernetes.azure.com/agentpool";

/** The VM scale set a node's VM belongs to, from its providerID; undefined for standalone VMs. */
export function vmSetOf(node: PlacedNode): string | undefined {
  return node.providerID?.match(/\/virtualMachineScaleSets\/([^/]+)\//i)?.[1];
}

/** Whether the node is in the configuration's primary VM set or agent pool (AKS names scale sets aks-<pool>-<n>-vmss). */
export function isPrimaryFor(c: LoadBalancerConfiguration, node: PlacedNode): boolean {
  const vmSet = vmSetOf(node)?.toLowerCase();
  if (c.primaryVMSet && vmSet === c.primaryVMSet.toLowerCase()) return true;
  const pool = c.primaryAgentPoolName?.toLowerCase();
  if (!pool) return false;
  const label = node.labels?.[AGENT_POOL_LABEL] ?? node.labels?.agentpool;
  if (label !== undefined) return label.toLowerCase() === pool;
  return vmSet !== undefined && new RegExp(`^aks-${escape(pool)}-\\d+-vmss$`).test(vmSet);
}

/** The configuration (by name) each node belongs to; nodes that belong to none are left out. */
export function assignNodes(
  configs: readonly LoadBalancerConfiguration[],
  nodes: readonly PlacedNode[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const node of nodes) {
    const primary = configs.find((c) => isPrimaryFor(c, node));
    if (primary) {
      out.set(node.name, primary.name);
      continue;
    }
    const labels = node.labels ?? {};
    let candidates = configs.filter(
      (c) => !isEmpty(c.nodeSelector) && matchesLabelSelector(c.nodeSelector!, labels),
    );
    if (!candidates.length) candidates = configs.filter((c) => isEmpty(c.nodeSelector));
    const best = candidates
      .map((c) => ({ c, score: hash(`${c.name.toLowerCase()}\n${node.name}`) }))
      .sort((a, b) => (a.score < b.score ? 1 : a.score > b.score ? -1 : 0))[0];
    if (best) out.set(node.name, best.c.name);
  }
  return out;
}

/** The nodes of one configuration's load balancers. */
export function nodesOf<N extends PlacedNode>(
  configs: readonly LoadBalancerConfiguration[],
  nodes: readonly N[],
  name: string,
): N[] {
  const assigned = assignNodes(configs, nodes);
  return nodes.filter((n) => assigned.get(n.name)?.toLowerCase() === name.toLowerCase());
}

const isEmpty = (s: LabelSelector | undefined): boolean =>
  !s || (!Object.keys(s.matchLabels ?? {}).length && !(s.matchExpressions ?? []).length);

const hash = (text: string): string => createHash("sha256").update(text).digest("hex");

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Nodes no configuration takes (every one has a nodeSelector they fail): no load balancer sends to them. */
export function unplacedNodes(
  configs: readonly LoadBalancerConfiguration[],
  nodes: readonly PlacedNode[],
): string[] {
  if (!configs.length) return [];
  const assigned = assignNodes(configs, nodes);
  return nodes.filter((n) => !assigned.has(n.name)).map((n) => n.name);
}
