import { setTimeout as sleep } from "node:timers/promises";
import type { CoreV1Event } from "@kubernetes/client-node";
import { beforeAll, onTestFinished } from "vitest";
import { addonPath } from "../../../speaker/io/addon.ts";
import { arpRequestFrame } from "../../../speaker/packets/arp.ts";
import { ndpFrame } from "../../../speaker/packets/announce.ts";
import { encodeNeighborSolicitation, solicitedNodeMulticast } from "../../../speaker/packets/ndp.ts";
import { expect, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { arping, metricSum, sendRawFrames, speakerMetrics, TcpProber } from "./clients.ts";
import { buildAddon, MetalCluster, SERVICE_PORT, TAKEOVER_BURST_MS, E2E_TIMEOUT_MS } from "./speakers.ts";

const V4 = "192.0.2.140";
const V6 = "2001:db8::140";

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

async function nodeAssignedEvents(cluster: TestCluster, service: string): Promise<CoreV1Event[]> {
  const list = await cluster.core.listNamespacedEvent({ namespace: cluster.namespace });
  return list.items.filter((e) => e.reason === "nodeAssigned" && e.involvedObject.name === service);
}

async function started(cluster: TestCluster, addresses: string[]) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses, onCleanup: onTestFinished });
  await metal.startSpeakers();
  await metal.createService("web", addresses);
  const elected = metal.electedFor(V4);
  await waitFor(
    "the elected node to announce",
    () => metal.announcersOf(V4).length === 1 && metal.announcersOf(V4)[0] === elected,
  );
  return { metal, elected };
}

test(
  "only the announcing node records nodeAssigned, once per change, and counts what it answers",
  async ({ cluster }) => {
    const { metal, elected } = await started(cluster, [V4]);
    const first = await waitFor("a nodeAssigned event", async () => {
      const events = await nodeAssignedEvents(cluster, "web");
      return events.length > 0 && events;
    });
    expect(first).toHaveLength(1);
    expect(first[0]!.message).toContain(`"${elected.name}"`);
    expect(first[0]!.source?.host).toBe(elected.name);

    await sleep(TAKEOVER_BURST_MS);
    await arping(metal.lan.client, V4, 3);
    const metrics = await speakerMetrics(elected.host);
    expect(
      metricSum(metrics, "portico_speaker_requests_answered_total", 'protocol="arp"'),
    ).toBeGreaterThanOrEqual(3);
    // The takeover burst: a gratuitous request and reply at 0, 500 and 1000 ms.
    expect(
      metricSum(metrics, "portico_speaker_gratuitous_sent_total", 'protocol="arp"'),
    ).toBeGreaterThanOrEqual(6);
    expect(metricSum(metrics, "portico_speaker_announced_addresses")).toBe(1);
    expect(metricSum(metrics, "portico_speaker_live_members")).toBe(3);
    for (const other of metal.nodes.filter((n) => n !== elected)) {
      const theirs = await speakerMetrics(other.host);
      expect(metricSum(theirs, "portico_speaker_requests_answered_total")).toBe(0);
      expect(metricSum(theirs, "portico_speaker_gratuitous_sent_total")).toBe(0);
    }

    await elected.kill();
    const next = metal.electedFor(
      V4,
      metal.nodes.filter((n) => n !== elected),
    );
    const events = await waitFor("a second nodeAssigned event", async () => {
      const list = await nodeAssignedEvents(cluster, "web");
      return list.length > 1 && list;
    });
    expect(events).toHaveLength(2);
    const latest = events.find((e) => e.source?.host === next.name);
    expect(latest?.message).toContain(`"${next.name}"`);
  },
  E2E_TIMEOUT_MS,
);

test(
  "hostile frames are dropped and counted, and an ARP flood neither starves the speaker nor moves the address",
  async ({ cluster }) => {
    const { metal, elected } = await started(cluster, [V4, V6]);
    const client = metal.lan.client;
    const prober = new TcpProber(metal.lan, client, [{ address: V4, port: SERVICE_PORT }]);
    await waitFor(
      "the client to reach the elected node",
      () => prober.lastAnswer(V4)?.answer === elected.name,
    );

    const request = arpRequestFrame({ senderMac: client.mac, senderIp: client.ipv4, targetIp: V4 });
    const truncated = request.subarray(0, 14 + 20);
    const badHardware = Buffer.from(request);
    badHardware.writeUInt16BE(6, 14);
    const solicitation = ndpFrame(
      encodeNeighborSolicitation({ source: client.ipv6, target: V6, sourceLinkLayerAddress: client.mac }),
      solicitedNodeMulticast(V6),
      undefined,
      client.mac,
    );
    const badChecksum = Buffer.from(solicitation);
    badChecksum.writeUInt8(badChecksum.readUInt8(solicitation.length - 1) ^ 0xff, solicitation.length - 1);
    await sendRawFrames(metal.lan, client, addonPath(), [truncated, badHardware, badChecksum], 10);
    await waitFor("the hostile frames to be counted by reason", async () => {
      const m = await speakerMetrics(elected.host);
      return (
        metricSum(m, "portico_speaker_frames_dropped_total", 'reason="Truncated"') === 10 &&
        metricSum(m, "portico_speaker_frames_dropped_total", 'reason="UnsupportedHardwareType"') === 10 &&
        metricSum(m, "portico_speaker_frames_dropped_total", 'reason="BadChecksum"') === 10
      );
    });

    const floodStart = Date.now();
    const sent = await sendRawFrames(metal.lan, client, addonPath(), [request], 100_000);
    const seconds = (Date.now() - floodStart) / 1000;
    const m = await speakerMetrics(elected.host);
    console.log(
      `ARP flood: ${sent} requests in ${seconds.toFixed(1)} s; the speaker received ` +
        `${metricSum(m, "portico_speaker_frames_received_total")} frames, answered ` +
        `${metricSum(m, "portico_speaker_requests_answered_total")}, rate-limited ` +
        `${metricSum(m, "portico_speaker_frames_dropped_total", 'reason="RateLimited"')}`,
    );
    expect(metricSum(m, "portico_speaker_requests_answered_total")).toBeGreaterThan(0);

    // The membership protocol kept running through the flood: nobody declared the flooded node dead.
    for (const node of metal.nodes) expect(node.declaredDead).toEqual([]);
    expect(metal.announcersOf(V4)).toEqual([elected]);
    await sleep(1000);
    const answers = await arping(client, V4, 3);
    expect(answers.macs).toEqual([elected.mac, elected.mac, elected.mac]);
    expect(prober.lastAnswer(V4, Date.now() - 1000)?.answer).toBe(elected.name);
  },
  E2E_TIMEOUT_MS,
);
