// A pool's nodeSelectors decide which nodes announce its addresses: real speakers on a LAN of namespaces,
// real Node labels and pools on the apiserver, and the answers a client on the LAN gets.
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, onTestFinished } from "vitest";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { arping, measureFailover, metricSum, speakerMetrics, TcpProber } from "./clients.ts";
import {
  buildAddon,
  E2E_TIMEOUT_MS,
  MetalCluster,
  SERVICE_PORT,
  TAKEOVER_BURST_MS,
  type MetalNode,
} from "./speakers.ts";

const V4 = "192.0.2.160";
const EDGE = "test.portico.io/edge";
const EDGE_ONLY = [{ matchLabels: { [EDGE]: "true" } }];

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

/** Sets (or with null removes) the edge label, as `kubectl label node` would. */
async function label(cluster: TestCluster, node: MetalNode, value: string | null): Promise<void> {
  await cluster.core.patchNode(
    { name: node.name, body: { metadata: { labels: { [EDGE]: value } } } },
    mergePatch,
  );
}

function only(announcers: MetalNode[], node: MetalNode): boolean {
  return announcers.length === 1 && announcers[0] === node;
}

async function expectArpFrom(metal: MetalCluster, node: MetalNode): Promise<void> {
  // The takeover's gratuitous burst would count as extra answers.
  await sleep(TAKEOVER_BURST_MS);
  expect((await arping(metal.lan.client, V4, 3)).macs).toEqual([node.mac, node.mac, node.mac]);
}

/**
 * Three nodes; `unrestricted` is the node that would announce V4 were the selectors ignored, so every
 * expectation below fails if they are. Of the other two, `first` beats `second` in the election.
 */
async function edgeCluster(cluster: TestCluster) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses: [V4], onCleanup: onTestFinished });
  await installPoolCrd(cluster);
  const unrestricted = metal.electedFor(V4);
  const others = metal.nodes.filter((n) => n !== unrestricted);
  const first = metal.electedFor(V4, others);
  const second = others.find((n) => n !== first)!;
  return { metal, unrestricted, first, second };
}

test(
  "a pool restricted to labelled nodes is answered from the labelled node only, and the answer follows the label",
  async ({ cluster }) => {
    const { metal, first, second } = await edgeCluster(cluster);
    await label(cluster, first, "true");
    await createPool(cluster, "edge", { addresses: [`${V4}/32`], nodeSelectors: EDGE_ONLY });
    await metal.startSpeakers();
    await metal.createService("web", [V4]);
    await waitFor("the labelled node alone to announce", () => only(metal.announcersOf(V4), first));
    await expectArpFrom(metal, first);
    const prober = new TcpProber(metal.lan, metal.lan.client, [{ address: V4, port: SERVICE_PORT }]);
    await waitFor(
      "the client to reach the labelled node",
      () => prober.lastAnswer(V4)?.answer === first.name,
    );

    // Two matching nodes: the election among them keeps the address where it is, once both speakers have
    // decided again after the label (a Node change makes every speaker recompute its announcements).
    await metal.decidedAgainAfter(() => label(cluster, second, "true"), [first, second]);
    expect(metal.announcersOf(V4)).toEqual([first]);

    const moved = await measureFailover(prober, V4, () => label(cluster, first, null));
    console.log(
      `relabel: clients reached ${moved.to} ${moved.elapsedMs} ms after the label was removed from ` +
        `${first.name} (${moved.failedProbes} failed probes)`,
    );
    expect(moved.to).toBe(second.name);
    await waitFor("the newly labelled node alone to announce", () => only(metal.announcersOf(V4), second));
    await expectArpFrom(metal, second);
  },
  E2E_TIMEOUT_MS,
);

test(
  "when no node matches, nobody answers, every speaker counts it and one Warning Event says why; a pool change brings the answer back",
  async ({ cluster }) => {
    const { metal, unrestricted } = await edgeCluster(cluster);
    const pool = await createPool(cluster, "edge", { addresses: [`${V4}/32`], nodeSelectors: EDGE_ONLY });
    await metal.startSpeakers();
    await metal.createService("web", [V4]);
    const unmatched = `portico_speaker_addresses_without_matching_node`;
    await waitFor("every speaker to count the address as without a matching node", async () => {
      for (const node of metal.nodes) {
        if (metricSum(await speakerMetrics(node.host), unmatched, `pool="${pool.name}"`) !== 1) return false;
      }
      return true;
    });
    expect(metal.announcersOf(V4)).toEqual([]);
    expect((await arping(metal.lan.client, V4, 2)).macs).toEqual([]);
    const warnings = async () =>
      (
        await cluster.core.listNamespacedEvent({
          namespace: cluster.namespace,
          fieldSelector: "involvedObject.name=web,reason=noMatchingNode",
        })
      ).items;
    const [warning, ...more] = await waitFor("the noMatchingNode Event", async () => {
      const events = await warnings();
      return events.length > 0 && events;
    });
    expect(more).toEqual([]);
    expect(warning).toMatchObject({ type: "Warning", source: { host: unrestricted.name } });
    expect(warning!.message).toContain(`${V4} (IPAddressPool ${pool.name})`);

    // Without selectors every node may announce again, and the election picks as it would without a pool.
    await pool.replace({ addresses: [`${V4}/32`] });
    await waitFor("the unrestricted winner alone to announce", () =>
      only(metal.announcersOf(V4), unrestricted),
    );
    await expectArpFrom(metal, unrestricted);
    for (const node of metal.nodes) expect(metricSum(await speakerMetrics(node.host), unmatched)).toBe(0);
    expect(await warnings()).toHaveLength(1);
  },
  E2E_TIMEOUT_MS,
);
