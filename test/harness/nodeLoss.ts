// A node lost under client load, as the client sees it: which node answers for an address (by the MAC in
// ARP replies), cutting that node off the LAN, and how long until the client's requests succeed again.
// Shared by the end-to-end tests and the benchmark.
import { arping } from "../integration/metal/clients.ts";
import type { E2eContext } from "./e2eSetup.ts";
import type { ClientLoad } from "./e2e.ts";
import { setCable } from "./netns.ts";
import { power } from "./localCluster/nodeControl.ts";
import type { NodeDescription } from "./localCluster/workerNode.ts";
import { waitFor } from "./wait.ts";

/** The node whose MAC answers ARP requests for `address` on the LAN (undefined: nobody answers). */
export async function announcer(context: E2eContext, address: string): Promise<NodeDescription | undefined> {
  const answers = await arping(context.client, address, 2);
  const macs = new Set(answers.macs.map((m) => m.toLowerCase()));
  return context.nodes.find((n) => macs.has(n.host.mac.toLowerCase()));
}

export interface NodeLossMeasurement {
  node: string;
  /**
   * From the cut to the end of the first request that succeeded after the outage the cut began (0 when no
   * request failed): how long the client could not get through.
   */
  outageMs: number;
  /** From the cut to the start of the last request that failed within the observation window. */
  lastFailureMs: number;
  failed: number;
  total: number;
}

/** Waits until the same node has answered ARP for `address` `times` times in a row, a second apart. */
export async function steadyAnnouncer(
  context: E2eContext,
  address: string,
  times = 3,
): Promise<NodeDescription> {
  const seen: (string | undefined)[] = [];
  return waitFor(
    `one node to keep answering ARP for ${address}`,
    async () => {
      const node = await announcer(context, address);
      seen.push(node?.layout.name);
      const last = seen.slice(-times);
      if (node && last.length === times && last.every((n) => n === node.layout.name)) return node;
      await new Promise((r) => setTimeout(r, 1000));
      throw new Error(`answered by ${last.join(", ")}`);
    },
    { timeoutMs: 60_000, intervalMs: 0 },
  );
}

/** How a node is lost: its cable pulled at the switch, or its power cut (every process killed at once). */
export type Loss = "link" | "power";

/**
 * Takes the node announcing `address` away while `load` runs (its cable, or with `power` every one of its
 * processes, kubelet, containerd and the speaker included), watches for `observeMs`, then brings it back
 * (plugged in, or booted again on the same disks). The caller waits for the cluster to settle before the
 * next trial.
 */
export async function cutAnnouncer(
  context: E2eContext,
  address: string,
  load: ClientLoad,
  observeMs = 30_000,
  loss: Loss = "link",
): Promise<NodeLossMeasurement> {
  const node = await waitFor(`a node answering ARP for ${address}`, () => announcer(context, address), {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  const from = load.results.length;
  const cut = Date.now();
  if (loss === "link") await setCable(node.host, false);
  else await power(context.powerSocket!, node.layout.name, "off");
  const sinceCut = () => load.results.slice(from).filter((r) => r.start >= cut);
  /** The first success after the first failure since the cut (undefined while the outage lasts). */
  const recovered = () => {
    const after = sinceCut().sort((a, b) => a.start - b.start);
    const firstFailure = after.find((r) => !r.ok);
    return firstFailure ? after.find((r) => r.ok && r.start > firstFailure.start) : after.find((r) => r.ok);
  };
  try {
    // Long enough for requests to meet the loss, then until one gets through again.
    await new Promise((r) => setTimeout(r, 1000));
    await waitFor(`a successful request after losing ${node.layout.name}`, () => recovered(), {
      timeoutMs: observeMs,
      intervalMs: 50,
    });
    await new Promise((r) => setTimeout(r, Math.max(0, cut + observeMs - Date.now())));
  } finally {
    if (loss === "link") await setCable(node.host, true);
    else await power(context.powerSocket!, node.layout.name, "on");
  }
  const after = sinceCut().filter((r) => r.start < cut + observeMs);
  const failures = after.filter((r) => !r.ok);
  const recovery = recovered()!;
  return {
    node: node.layout.name,
    outageMs: failures.length ? recovery.start + recovery.ms - cut : 0,
    lastFailureMs: failures.length ? failures.at(-1)!.start - cut : 0,
    failed: failures.length,
    total: after.length,
  };
}
