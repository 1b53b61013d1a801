// Make-before-break between real speakers on a LAN of namespaces: when an address moves — to a restarted
// speaker, away from one shut down with SIGTERM, after a relabel or a pool edit — the node that answered it keeps answering
// until the new announcer says it answers, so a client asking every 10 ms is never left without an answer.
// The client records every request and answer (arpRecorder.ts).
import { beforeAll, onTestFinished } from "vitest";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { ArpRecorder } from "./arpRecorder.ts";
import { metricSum, speakerMetrics } from "./clients.ts";
import { handoverSeen } from "./exchanges.ts";
import { buildAddon, E2E_TIMEOUT_MS, MetalCluster, type MetalNode } from "./speakers.ts";

const V4 = "192.0.2.130";
const EXCLUDE = "node.kubernetes.io/exclude-from-external-load-balancers";

beforeAll(async () => {
  await buildAddon();
}, 180_000);

function only(announcers: MetalNode[], node: MetalNode): boolean {
  return announcers.length === 1 && announcers[0] === node;
}

/**
 * Three nodes announcing V4, a client asking for it every 10 ms and recording who answers. `before` runs
 * before the speakers start (to set up pools).
 */
async function recordedCluster(
  cluster: TestCluster,
  before: (metal: MetalCluster) => Promise<void> = () => Promise.resolve(),
) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses: [V4], onCleanup: onTestFinished });
  await before(metal);
  await metal.startSpeakers();
  await metal.createService("web", [V4]);
  const elected = metal.electedFor(V4);
  const successor = metal.electedFor(
    V4,
    metal.nodes.filter((n) => n !== elected),
  );
  await waitFor("the elected node alone to announce", () => only(metal.announcersOf(V4), elected));
  const recorder = new ArpRecorder(metal.lan, metal.lan.client, V4);
  onTestFinished(() => recorder.stop());
  await recorder.start();
  return { metal, elected, successor, recorder };
}

/** Waits until `to` answered the client and `from` no longer does, then checks nobody left a request unanswered. */
async function expectSeamless(recorder: ArpRecorder, from: MetalNode, to: MetalNode, since: number) {
  await waitFor(`${to.name} alone to answer the client`, () => {
    const last = recorder.exchanges(since).at(-1);
    return last !== undefined && last.answers.length > 0 && last.answers.every((a) => a.mac === to.mac);
  });
  const seen = handoverSeen(recorder.exchanges(since), from.mac, to.mac);
  expect(seen, "the new announcer's answers were captured").toBeDefined();
  // Make-before-break: between the old announcer's last answer and the new one's first, every request was
  // answered (a break before the make would leave each request of that time unanswered).
  expect(seen!.unansweredBetween).toBe(0);
}

test(
  "a restarted speaker leaves its address with the successor, and takes it over without a moment unanswered once the successor is excluded",
  async ({ cluster }) => {
    const { metal, elected, successor, recorder } = await recordedCluster(cluster);
    await elected.kill();
    await waitFor("the successor alone to announce", () => only(metal.announcersOf(V4), successor));
    await waitFor("the successor's answers to reach the client", () =>
      recorder
        .exchanges()
        .at(-1)!
        .answers.some((a) => a.mac === successor.mac),
    );

    const restarted = Date.now();
    elected.live = [];
    elected.startSpeaker();
    await metal.waitAllAlive();
    await metal.createService("probe", ["192.0.2.131"]);
    // The restarted speaker decides (it announces a new Service's address, whatever node it is elected for),
    // and the address stays where the records say it is.
    await waitFor("a node to announce the new Service's address", () =>
      metal.announcersOf("192.0.2.131").length === 1 ? true : undefined,
    );
    const since = Date.now();
    expect(recorder.exchanges(restarted).flatMap((e) => e.answers.map((a) => a.mac))).not.toContain(
      elected.mac,
    );
    expect(metal.announcersOf(V4)).toEqual([successor]);

    await cluster.core.patchNode(
      { name: successor.name, body: { metadata: { labels: { [EXCLUDE]: "true" } } } },
      mergePatch,
    );
    await expectSeamless(recorder, successor, elected, since);
    // The successor let go because the restarted speaker said it answers, not because it gave up waiting.
    await waitFor("the successor to log the hand-over", () =>
      successor.handedOver.some((h) => h.address === V4),
    );
    expect(successor.handedOver.filter((h) => h.address === V4)).toEqual([
      { address: V4, to: elected.name, reason: "confirmed" },
    ]);
    // The successor answered the restarted speaker's conflict probe while it held the address: no conflict.
    await waitFor(
      "the restarted speaker's conflict probe to end",
      async () => metricSum(await speakerMetrics(elected.host), "portico_speaker_address_probes_total") > 0,
    );
    expect(elected.foundInUse).toEqual([]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "a speaker shut down with SIGTERM answers until its successor does",
  async ({ cluster }) => {
    const { elected, successor, recorder } = await recordedCluster(cluster);
    const since = Date.now();
    await elected.terminate();
    expect(elected.handedOver).toEqual([{ address: V4, to: successor.name, reason: "confirmed" }]);
    await expectSeamless(recorder, elected, successor, since);
  },
  E2E_TIMEOUT_MS,
);

test(
  "relabelling the announcing node moves the address away without a moment unanswered, and back only when its successor is relabelled",
  async ({ cluster }) => {
    const { metal, elected, successor, recorder } = await recordedCluster(cluster);
    const label = (value: string | null) =>
      cluster.core.patchNode(
        { name: elected.name, body: { metadata: { labels: { [EXCLUDE]: value } } } },
        mergePatch,
      );

    let since = Date.now();
    await label("true");
    await expectSeamless(recorder, elected, successor, since);
    await waitFor("the successor alone to announce", () => only(metal.announcersOf(V4), successor));

    since = Date.now();
    await label(null);
    // The address stays with the successor: moving it back would cut the connections entering there. It goes
    // back once the successor may not announce it either.
    await cluster.core.patchNode(
      { name: successor.name, body: { metadata: { labels: { [EXCLUDE]: "true" } } } },
      mergePatch,
    );
    await expectSeamless(recorder, successor, elected, since);
    await waitFor("the labelled node's hand-over to be logged", () =>
      successor.handedOver.some((h) => h.address === V4),
    );
    expect(elected.handedOver).toEqual([{ address: V4, to: successor.name, reason: "confirmed" }]);
    expect(successor.handedOver).toEqual([{ address: V4, to: elected.name, reason: "confirmed" }]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "editing the pool's node selectors moves the address away and back without a moment unanswered",
  async ({ cluster }) => {
    const SIDE = "test.portico.io/side";
    const side = (value: string) => ({ nodeSelectors: [{ matchLabels: { [SIDE]: value } }] });
    let pool!: Awaited<ReturnType<typeof createPool>>;
    const { elected, successor, recorder } = await recordedCluster(cluster, async (metal) => {
      await installPoolCrd(cluster);
      // The node the election picks among all stands on side a, the next one on side b.
      const first = metal.electedFor(V4);
      const second = metal.electedFor(
        V4,
        metal.nodes.filter((n) => n !== first),
      );
      for (const [node, value] of [
        [first, "a"],
        [second, "b"],
      ] as const) {
        await cluster.core.patchNode(
          { name: node.name, body: { metadata: { labels: { [SIDE]: value } } } },
          mergePatch,
        );
      }
      pool = await createPool(cluster, "edited", { addresses: [`${V4}/32`], ...side("a") });
    });

    let since = Date.now();
    await pool.replace({ addresses: [`${V4}/32`], ...side("b") });
    await expectSeamless(recorder, elected, successor, since);

    since = Date.now();
    await pool.replace({ addresses: [`${V4}/32`], ...side("a") });
    await expectSeamless(recorder, successor, elected, since);
    await waitFor("the hand-back to be logged", () => successor.handedOver.some((h) => h.address === V4));
    expect(elected.handedOver).toEqual([{ address: V4, to: successor.name, reason: "confirmed" }]);
    expect(successor.handedOver).toEqual([{ address: V4, to: elected.name, reason: "confirmed" }]);
  },
  E2E_TIMEOUT_MS,
);
