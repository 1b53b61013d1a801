// L2Advertisements decide which nodes answer for a pool's addresses and on which interfaces, as in MetalLB: real
// speakers on a LAN of namespaces, MetalLB's own IPAddressPools and L2Advertisements (metallb.io/v1beta1) and
// Portico's on the apiserver, and the ARP answers a client on the LAN gets.
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, onTestFinished } from "vitest";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import {
  createMetallbAdvertisement,
  createMetallbPool,
  createPorticoAdvertisement,
  installAdvertisementCrds,
} from "../../harness/metallb.ts";
import { IP, requireLanTools, sh } from "../../harness/netns.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";
import { arping } from "./clients.ts";
import { buildAddon, E2E_TIMEOUT_MS, MetalCluster, TAKEOVER_BURST_MS, type MetalNode } from "./speakers.ts";

const EDGE = "test.portico.io/edge";

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

async function label(cluster: TestCluster, node: MetalNode): Promise<void> {
  await cluster.core.patchNode(
    { name: node.name, body: { metadata: { labels: { [EDGE]: "true" } } } },
    mergePatch,
  );
}

/** Every ARP answer a client gets for `address` (after any takeover burst), by MAC. */
async function answers(metal: MetalCluster, address: string): Promise<readonly string[]> {
  await sleep(TAKEOVER_BURST_MS);
  return (await arping(metal.lan.client, address, 3)).macs;
}

/** The nodes' speakers read MetalLB's objects in the test's namespace, where the test puts them. */
async function setUp(cluster: TestCluster, addresses: string[]) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses, onCleanup: onTestFinished });
  await installPoolCrd(cluster);
  await installAdvertisementCrds(cluster);
  return metal;
}

test(
  "a MetalLB pool is answered only by the nodes its L2Advertisement selects, and a pool without one by nobody",
  async ({ cluster }) => {
    const [EDGE_IP, DARK_IP] = ["192.0.2.170", "192.0.2.171"];
    const metal = await setUp(cluster, [EDGE_IP, DARK_IP]);
    // The labelled node is not the one the election picks without selectors, so ignoring them would show.
    const unrestricted = metal.electedFor(EDGE_IP);
    const labelled = metal.electedFor(
      EDGE_IP,
      metal.nodes.filter((n) => n !== unrestricted),
    );
    await label(cluster, labelled);
    await createMetallbPool(cluster, "edge", { addresses: [`${EDGE_IP}/32`] });
    await createMetallbPool(cluster, "dark", { addresses: [`${DARK_IP}/32`] });
    await createMetallbAdvertisement(cluster, "edge", {
      ipAddressPools: ["edge"],
      nodeSelectors: [{ matchLabels: { [EDGE]: "true" } }],
    });
    await metal.startSpeakers([`--metallb-namespace=${cluster.namespace}`]);
    await metal.createService("web", [EDGE_IP]);
    await metal.createService("dark", [DARK_IP]);

    await waitFor("the labelled node alone to announce the advertised pool", () => {
      const announcers = metal.announcersOf(EDGE_IP);
      return announcers.length === 1 && announcers[0] === labelled;
    });
    expect(await answers(metal, EDGE_IP)).toEqual([labelled.mac, labelled.mac, labelled.mac]);
    expect(metal.announcersOf(DARK_IP)).toEqual([]);
    expect(await answers(metal, DARK_IP)).toEqual([]);
    const [event, ...more] = await waitFor("the noAdvertisement Event", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: cluster.namespace,
        fieldSelector: "involvedObject.name=dark,reason=noAdvertisement",
      });
      return events.items.length > 0 && events.items;
    });
    expect(more).toEqual([]);
    expect(event).toMatchObject({ type: "Warning", source: { host: metal.electedFor(DARK_IP).name } });
    expect(event!.message).toContain(
      `${DARK_IP} (IPAddressPool ${cluster.namespace}/dark): no L2Advertisement`,
    );

    // An advertisement naming no pool selects every MetalLB pool: the dark pool is answered, by any node.
    await metal.decidedAgainAfter(() => createMetallbAdvertisement(cluster, "everything", {}));
    const winner = metal.electedFor(DARK_IP);
    await waitFor("the dark pool's address to be announced", () => {
      const announcers = metal.announcersOf(DARK_IP);
      return announcers.length === 1 && announcers[0] === winner;
    });
    expect(await answers(metal, DARK_IP)).toEqual([winner.mac, winner.mac, winner.mac]);
    // The edge pool is now selected by both (and every speaker has decided since): their node selectors are
    // ORed, so any node may announce it. The labelled node keeps it (a move would cut connections); excluded, it hands it to the node the open
    // election picks, which is not labelled: only the second advertisement allows it.
    expect(metal.announcersOf(EDGE_IP)).toEqual([labelled]);
    await cluster.core.patchNode(
      {
        name: labelled.name,
        body: { metadata: { labels: { "node.kubernetes.io/exclude-from-external-load-balancers": "" } } },
      },
      mergePatch,
    );
    await waitFor("the edge pool's address to follow the open election", () => {
      const announcers = metal.announcersOf(EDGE_IP);
      return announcers.length === 1 && announcers[0] === unrestricted;
    });
  },
  E2E_TIMEOUT_MS,
);

/** A second cable from `node` to the LAN's switch: another interface on the same segment, with its own MAC. */
async function secondInterface(metal: MetalCluster, node: MetalNode): Promise<{ name: string; mac: string }> {
  const tag = metal.lan.id.slice(-4);
  const name = `f${tag}${node.name.slice(-1)}`;
  const switchSide = `g${tag}${node.name.slice(-1)}`;
  await sh(IP, [
    "-n",
    metal.lan.lanNamespace,
    "link",
    "add",
    switchSide,
    "type",
    "veth",
    "peer",
    "name",
    name,
    "netns",
    node.host.namespace,
  ]);
  await sh(IP, ["-n", metal.lan.lanNamespace, "link", "set", switchSide, "master", "br0", "up"]);
  await sh(IP, ["-n", node.host.namespace, "link", "set", name, "up"]);
  const [link] = JSON.parse(await sh(IP, ["-j", "-n", node.host.namespace, "link", "show", name])) as {
    address: string;
  }[];
  return { name, mac: link!.address };
}

test(
  "interfaces: a Portico L2Advertisement's pool is answered only on the interface it names; a Portico pool without one as before",
  async ({ cluster }) => {
    const [FRONT_IP, PLAIN_IP] = ["192.0.2.172", "192.0.2.173"];
    const metal = await setUp(cluster, [FRONT_IP, PLAIN_IP]);
    const [dual, other] = [metal.nodes[0]!, metal.nodes[1]!];
    const second = await secondInterface(metal, dual);
    await label(cluster, dual);
    const front = await createPool(cluster, "front", { addresses: [`${FRONT_IP}/32`] });
    // Announced as before advertisements existed: its own nodeSelectors, every interface.
    await createPool(cluster, "plain", {
      addresses: [`${PLAIN_IP}/32`],
      nodeSelectors: [{ matchLabels: { "kubernetes.io/hostname": other.name } }],
    });
    await cluster.core.patchNode(
      { name: other.name, body: { metadata: { labels: { "kubernetes.io/hostname": other.name } } } },
      mergePatch,
    );
    await createPorticoAdvertisement(cluster, "front", {
      ipAddressPools: [front.name],
      nodeSelectors: [{ matchLabels: { [EDGE]: "true" } }],
      interfaces: [second.name],
    });
    await metal.startSpeakers();
    await metal.createService("front", [FRONT_IP]);
    await metal.createService("plain", [PLAIN_IP]);

    await waitFor("the labelled node alone to announce the advertised pool", () => {
      const announcers = metal.announcersOf(FRONT_IP);
      return announcers.length === 1 && announcers[0] === dual;
    });
    // The client's request reaches both of the node's interfaces; only the named one answers, with its own MAC.
    expect(await answers(metal, FRONT_IP)).toEqual([second.mac, second.mac, second.mac]);
    await waitFor("the plain pool's node to announce it", () => {
      const announcers = metal.announcersOf(PLAIN_IP);
      return announcers.length === 1 && announcers[0] === other;
    });
    expect(await answers(metal, PLAIN_IP)).toEqual([other.mac, other.mac, other.mac]);
  },
  E2E_TIMEOUT_MS,
);

test(
  "serviceSelectors: an advertisement applies only to the Services it selects; a Service no advertisement selects is not answered",
  async ({ cluster }) => {
    const [SELECTED_IP, OTHER_IP] = ["192.0.2.174", "192.0.2.175"];
    const metal = await setUp(cluster, [SELECTED_IP, OTHER_IP]);
    await createMetallbPool(cluster, "shop", { addresses: [`${SELECTED_IP}/31`] });
    const unrestricted = metal.electedFor(SELECTED_IP);
    const labelled = metal.electedFor(
      SELECTED_IP,
      metal.nodes.filter((n) => n !== unrestricted),
    );
    await label(cluster, labelled);
    await createMetallbAdvertisement(cluster, "frontends", {
      ipAddressPools: ["shop"],
      serviceSelectors: [{ matchLabels: { tier: "frontend" } }],
      nodeSelectors: [{ matchLabels: { [EDGE]: "true" } }],
    });
    await metal.startSpeakers([`--metallb-namespace=${cluster.namespace}`]);
    await metal.createService("front", [SELECTED_IP]);
    await metal.createService("back", [OTHER_IP]);
    await cluster.core.patchNamespacedService(
      { name: "front", namespace: cluster.namespace, body: { metadata: { labels: { tier: "frontend" } } } },
      mergePatch,
    );
    await waitFor("the selected Service's address on the advertised node", () => {
      const announcers = metal.announcersOf(SELECTED_IP);
      return announcers.length === 1 && announcers[0] === labelled;
    });
    expect(await answers(metal, SELECTED_IP)).toEqual([labelled.mac, labelled.mac, labelled.mac]);
    expect(metal.announcersOf(OTHER_IP)).toEqual([]);
    expect(await answers(metal, OTHER_IP)).toEqual([]);
  },
  E2E_TIMEOUT_MS,
);
