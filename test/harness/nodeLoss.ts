// A node lost under client load, as the client sees it: which node answers for an address (by the MAC in
// ARP replies), cutting that node off the LAN, and how long until the client's requests succeed again.
// Shared by the end-to-end tests and the benchmark.
import { arping } from "../integration/metal/clients.ts";
import type { E2eContext } from "./e2eSetup.ts";
import type { ClientLoad } from "./e2e.ts";
import { IP, sh } from "./netns.ts";
import type { NodeDescription } from "./localCluster/workerNode.ts";
import { waitFor } from "./wait.ts";

/** The node whose MAC answers ARP requests for `address` on the LAN (undefined: nobody answers). */
export async function announcer(context: E2eContext, address: string): Promise<NodeDescription | undefined> {
  const answers = await arping(context.client, address, 2);
  const macs = new Set(answers.macs.map((m) => m.toLowerCase()));
  return context.nodes.find((n) => macs.has(n.host.mac.toLowerCase()));
}

/**
 * Pulls the node's cable at the switch (or plugs it back): the node sees its carrier go, as a real one
 * would, and keeps its addresses and routes, which taking its own interface down would delete.
 */
export async function setNodeLink(node: NodeDescription, up: boolean): Promise<void> {
  const port = node.host.switchPort;
  await sh(IP, ["-n", port.namespace, "link", "set", port.iface, up ? "up" : "down"]);
}

export interface NodeLossMeasurement {
  node: string;
  /** From the cut to the first request (started after the cut) that succeeded. */
  firstSuccessMs: number;
  /** From the cut to the start of the last request that failed within the observation window. */
  lastFailureMs: number;
  failed: number;
  total: number;
}

/**
 * Cuts the link of the node announcing `address` while `load` runs, watches for `observeMs`, then brings
 * the link back. The caller waits for the cluster to settle before the next trial.
 */
export async function cutAnnouncer(
  context: E2eContext,
  address: string,
  load: ClientLoad,
  observeMs = 30_000,
): Promise<NodeLossMeasurement> {
  const node = await waitFor(`a node answering ARP for ${address}`, () => announcer(context, address), {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  const from = load.results.length;
  const cut = Date.now();
  await setNodeLink(node, false);
  try {
    await waitFor(
      `a successful request after cutting ${node.layout.name} off`,
      () => load.results.slice(from).some((r) => r.ok && r.start >= cut) || undefined,
      { timeoutMs: observeMs, intervalMs: 50 },
    );
    await new Promise((r) => setTimeout(r, Math.max(0, cut + observeMs - Date.now())));
  } finally {
    await setNodeLink(node, true);
  }
  const after = load.results.slice(from).filter((r) => r.start >= cut && r.start < cut + observeMs);
  const firstSuccess = after.find((r) => r.ok)!;
  const failures = after.filter((r) => !r.ok);
  return {
    node: node.layout.name,
    firstSuccessMs: firstSuccess.start + firstSuccess.ms - cut,
    lastFailureMs: failures.length ? failures.at(-1)!.start - cut : 0,
    failed: failures.length,
    total: after.length,
  };
}
