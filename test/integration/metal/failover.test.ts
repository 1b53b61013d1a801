import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, onTestFinished } from "vitest";
import { expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { arping, measureFailover, TcpProber } from "./clients.ts";
import {
  buildAddon,
  MetalCluster,
  SERVICE_PORT,
  TAKEOVER_BURST_MS,
  type MetalNode,
  E2E_TIMEOUT_MS,
} from "./speakers.ts";

const V4 = "192.0.2.120";

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

/** Three nodes announcing V4, with a client probing it over TCP through the elected node. */
async function announcedCluster(cluster: Parameters<typeof MetalCluster.create>[0]) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses: [V4], onCleanup: onTestFinished });
  await metal.startSpeakers();
  await metal.createService("web", [V4]);
  const elected = metal.electedFor(V4);
  await waitFor("the elected node alone to announce", () => only(metal.announcersOf(V4), elected));
  const prober = new TcpProber(metal.lan, metal.lan.client, [{ address: V4, port: SERVICE_PORT }]);
  await waitFor("the client to reach the elected node", () => prober.lastAnswer(V4)?.answer === elected.name);
  return { metal, elected, prober };
}

/** The nodes whose ServiceL2Status records say they announce an address of Service `name`, sorted. */
async function recordedNodes(metal: MetalCluster, name: string): Promise<string[]> {
  return (await metal.l2Records())
    .filter((r) => r.status.serviceName === name && (r.status.addresses ?? []).length > 0)
    .map((r) => r.status.node)
    .sort();
}

function only(announcers: MetalNode[], node: MetalNode): boolean {
  return announcers.length === 1 && announcers[0] === node;
}

/** After a failover: exactly one node answers ARP, the one the election picks among the survivors. */
async function expectSoleAnnouncer(metal: MetalCluster, survivors: MetalNode[]): Promise<MetalNode> {
  const next = metal.electedFor(V4, survivors);
  await waitFor("the next elected node alone to announce", () => only(metal.announcersOf(V4), next));
  await sleep(TAKEOVER_BURST_MS);
  const answers = await arping(metal.lan.client, V4, 3);
  expect(answers.macs).toEqual([next.mac, next.mac, next.mac]);
  return next;
}

test(
  "a speaker killed with SIGKILL is replaced and clients reach the address through another node",
  async ({ cluster }) => {
    const { metal, elected, prober } = await announcedCluster(cluster);
    const failover = await measureFailover(prober, V4, () => elected.kill());
    console.log(
      `failover after SIGKILL: clients reached ${failover.to} ${failover.elapsedMs} ms after the kill ` +
        `(${failover.failedProbes} failed probes)`,
    );
    const survivors = metal.nodes.filter((n) => n !== elected);
    const next = await expectSoleAnnouncer(metal, survivors);
    expect(failover.to).toBe(next.name);
  },
  E2E_TIMEOUT_MS,
);

test(
  "a speaker stopped with SIGTERM hands its addresses over at once, without waiting for detection",
  async ({ cluster }) => {
    const { metal, elected, prober } = await announcedCluster(cluster);
    const failover = await measureFailover(prober, V4, () => elected.terminate());
    console.log(
      `handover after SIGTERM: clients reached ${failover.to} ${failover.elapsedMs} ms after the signal`,
    );
    const survivors = metal.nodes.filter((n) => n !== elected);
    const next = await expectSoleAnnouncer(metal, survivors);
    expect(failover.to).toBe(next.name);
    expect(await elected.process?.exited).toBe(0);
    // The others learned of the departure from the speaker itself: none had to declare it dead.
    for (const node of survivors) expect(node.declaredDead).not.toContain(elected.name);
  },
  E2E_TIMEOUT_MS,
);

test(
  "a speaker cut off from the LAN is replaced, and once it returns one node alone answers",
  async ({ cluster }) => {
    const { metal, elected, prober } = await announcedCluster(cluster);
    const failover = await measureFailover(prober, V4, () => metal.lan.setLink(elected.host, false));
    console.log(
      `failover after a partition: clients reached ${failover.to} ${failover.elapsedMs} ms after the cut`,
    );
    const survivors = metal.nodes.filter((n) => n !== elected);
    const next = metal.electedFor(V4, survivors);
    await waitFor("the next elected node to announce", () => metal.announcersOf(V4).includes(next));
    expect(failover.to).toBe(next.name);

    // Cut off, the node announced the address too (it saw itself alone) and recorded it, each side deleting
    // the other's record: which of the two keeps it depends on whose record was last written, and the two may
    // hand it over once more as the last writes land. So only that one node settles as the announcer, its
    // record the only one, is certain.
    await metal.lan.setLink(elected.host, true);
    await metal.waitAllAlive();
    const [kept] = await waitFor(
      "one node alone to announce again, and the records to name it alone",
      async () => {
        const now = metal.announcersOf(V4);
        if (now.length !== 1) return false;
        const recorded = await recordedNodes(metal, "web");
        return (
          recorded.length === 1 && recorded[0] === now[0]!.name && metal.announcersOf(V4)[0] === now[0] && now
        );
      },
    );
    expect([elected, next]).toContain(kept);
    await sleep(TAKEOVER_BURST_MS);
    const answers = await arping(metal.lan.client, V4, 3);
    expect(answers.macs).toEqual([kept!.mac, kept!.mac, kept!.mac]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "an address stays with the node that took it over when its first announcer returns",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [V4],
      onCleanup: onTestFinished,
    });
    await metal.startSpeakers();
    await metal.createService("web", [V4]);
    const elected = metal.electedFor(V4);
    await waitFor("the elected node alone to announce", () => only(metal.announcersOf(V4), elected));
    await waitFor("its record", async () => (await recordedNodes(metal, "web")).join() === elected.name);
    await elected.kill();
    const survivors = metal.nodes.filter((n) => n !== elected);
    const next = await expectSoleAnnouncer(metal, survivors);
    await waitFor("the record to name the new announcer alone", async () => {
      return (await recordedNodes(metal, "web")).join() === next.name;
    });

    // The first announcer's speaker comes back. Its election would prefer it, but the address stays: moving
    // it would cut every connection entering through the node that took it over.
    elected.startSpeaker();
    await metal.waitAllAlive();
    // Evidence that the returned speaker decides with the others: an address it is preferred for, on a new
    // Service, is announced by it.
    // Thirty candidates: with three nodes, none preferring the returned one happens once in about 190,000 runs
    // (six candidates missed it once in eleven: the nodes' names, and so the election, differ from run to run).
    const other = Array.from({ length: 30 }, (_, i) => `192.0.2.${121 + i}`).find(
      (a) => metal.electedFor(a) === elected,
    );
    expect(other, "an address the returned node is preferred for").toBeDefined();
    await metal.createService("other", [other!]);
    await waitFor("the returned node to announce the new Service's address", () =>
      only(metal.announcersOf(other!), elected),
    );
    expect(metal.announcersOf(V4)).toEqual([next]);
    expect(elected.owned).not.toContain(V4);
    await sleep(TAKEOVER_BURST_MS);
    expect((await arping(metal.lan.client, V4, 3)).macs).toEqual([next.mac, next.mac, next.mac]);
    expect(await recordedNodes(metal, "web")).toEqual([next.name]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "with externalTrafficPolicy Local the address follows the node with the ready endpoint, cordoned or not",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [V4],
      onCleanup: onTestFinished,
    });
    // Start on a node the Cluster-policy election would not pick, so following the endpoint is visible.
    const [first, second] = metal.nodes.filter((n) => n !== metal.electedFor(V4)) as [MetalNode, MetalNode];
    await metal.startSpeakers();
    await metal.createService("web", [V4], { local: true, endpointNodes: [first] });
    await waitFor("the node with the endpoint alone to announce", () => only(metal.announcersOf(V4), first));
    const prober = new TcpProber(metal.lan, metal.lan.client, [{ address: V4, port: SERVICE_PORT }]);
    await waitFor("the client to reach that node", () => prober.lastAnswer(V4)?.answer === first.name);

    const moved = await measureFailover(prober, V4, () => metal.moveEndpoint("web", second));
    console.log(`Local policy: clients followed the endpoint to ${moved.to} in ${moved.elapsedMs} ms`);
    expect(moved.to).toBe(second.name);
    await waitFor("the new endpoint's node alone to announce", () => only(metal.announcersOf(V4), second));
    await sleep(TAKEOVER_BURST_MS);
    expect((await arping(metal.lan.client, V4, 3)).macs).toEqual([second.mac, second.mac, second.mac]);

    // Cordoned, its node keeps announcing: its own pod is the only one Local traffic can reach. Checked once
    // every speaker has decided again after the cordon.
    await metal.decidedAgainAfter(() =>
      cluster.core.patchNode({ name: second.name, body: { spec: { unschedulable: true } } }, mergePatch),
    );
    expect(metal.announcersOf(V4)).toEqual([second]);
    expect(prober.lastAnswer(V4, Date.now() - 1000)?.answer).toBe(second.name);

    // No ready endpoint anywhere: the address is not announced at all.
    await metal.setEndpointReady("web", false);
    await waitFor("no node to announce", () => metal.announcersOf(V4).length === 0);
    expect((await arping(metal.lan.client, V4, 2)).macs).toEqual([]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "a node that turns NotReady, is excluded from load balancers or is cordoned for a drain stops announcing",
  async ({ cluster }) => {
    const { metal, elected } = await announcedCluster(cluster);
    const others = metal.nodes.filter((n) => n !== elected);

    await cluster.setNodeStatus(elected.name, { ready: false, internalIP: elected.host.ipv4 });
    const standby = await expectSoleAnnouncer(metal, others);
    // Ready again, the node does not take the address back: the standby keeps it (moving it would cut the
    // connections entering through the standby). Checked once every speaker has decided again.
    await metal.decidedAgainAfter(() =>
      cluster.setNodeStatus(elected.name, { ready: true, internalIP: elected.host.ipv4 }),
    );
    expect(metal.announcersOf(V4)).toEqual([standby]);

    await cluster.core.patchNode(
      {
        name: standby.name,
        body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } } },
      },
      mergePatch,
    );
    const remaining = metal.nodes.filter((n) => n !== standby);
    const next = await expectSoleAnnouncer(metal, remaining);

    // Cordoned, as `kubectl drain` does before it evicts the node's pods: the address moves first, handed over.
    await cluster.core.patchNode({ name: next.name, body: { spec: { unschedulable: true } } }, mergePatch);
    const last = await expectSoleAnnouncer(
      metal,
      remaining.filter((n) => n !== next),
    );
    const handover = await waitFor("the cordoned node to hand the address over", () =>
      next.handedOver.find((h) => h.address === V4 && h.to === last.name),
    );
    expect(handover.reason).toBe("confirmed");
  },
  E2E_TIMEOUT_MS,
);
