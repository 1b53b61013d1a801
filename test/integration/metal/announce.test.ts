import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, onTestFinished } from "vitest";
import { expect, test, waitFor } from "../../harness/index.ts";
import { requireLanTools, sh } from "../../harness/netns.ts";
import { arping, ndisc, TcpProber } from "./clients.ts";
import { buildAddon, MetalCluster, SERVICE_PORT, TAKEOVER_BURST_MS, E2E_TIMEOUT_MS } from "./speakers.ts";

const V4 = "192.0.2.100";
const V6 = "2001:db8::100";

beforeAll(async () => {
  requireLanTools(["arping", "ndisc6"]);
  await buildAddon();
}, 180_000);

test(
  "every address is answered exactly once, by the elected node, and TCP reaches that node",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [V4, V6],
      onCleanup: onTestFinished,
    });
    await metal.startSpeakers();
    await metal.createService("web", [V4, V6]);
    const elected4 = metal.electedFor(V4);
    const elected6 = metal.electedFor(V6);
    await waitFor("the elected nodes alone to announce", () => {
      const a4 = metal.announcersOf(V4).map((n) => n.name);
      const a6 = metal.announcersOf(V6).map((n) => n.name);
      return a4.length === 1 && a4[0] === elected4.name && a6.length === 1 && a6[0] === elected6.name;
    });

    // Gratuitous announcements of the takeover (a burst over 1 s) would count as extra answers.
    await sleep(TAKEOVER_BURST_MS);
    const arp = await arping(metal.lan.client, V4, 3);
    expect(arp.macs).toEqual([elected4.mac, elected4.mac, elected4.mac]);
    expect(arp.sent).toBe(3);
    console.log(
      `ARP reply round trip through the speaker: ${arp.rttMs.map((ms) => ms.toFixed(2)).join(", ")} ms`,
    );
    const nd = await ndisc(metal.lan.client, V6);
    expect(nd.macs).toEqual([elected6.mac]);

    const prober = new TcpProber(metal.lan, metal.lan.client, [
      { address: V4, port: SERVICE_PORT },
      { address: V6, port: SERVICE_PORT },
    ]);
    await waitFor(
      "TCP over IPv4 to reach the elected node",
      () => prober.lastAnswer(V4)?.answer === elected4.name,
    );
    await waitFor(
      "TCP over IPv6 to reach the elected node",
      () => prober.lastAnswer(V6)?.answer === elected6.name,
    );
  },
  E2E_TIMEOUT_MS,
);

test(
  "behind a switch with MLD snooping, solicitations reach the elected node because it reports the group",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [V6],
      onCleanup: onTestFinished,
      mldSnooping: true,
    });
    await metal.startSpeakers();
    await metal.createService("web", [V6]);
    const elected = metal.electedFor(V6);
    await waitFor("the elected node alone to announce", () => {
      const announcers = metal.announcersOf(V6);
      return announcers.length === 1 && announcers[0] === elected;
    });
    await sleep(TAKEOVER_BURST_MS);
    console.log("MDB", await sh("bridge", ["-n", metal.lan.lanNamespace, "mdb", "show"]), elected.host);
    console.log("MADDR", await sh("ip", ["-n", elected.host.namespace, "-6", "maddr", "show"]));
    const nd = await waitFor("an answer through the snooping bridge", async () => {
      const answers = await ndisc(metal.lan.client, V6);
      return answers.macs.length > 0 && answers;
    });
    expect(nd.macs).toEqual([elected.mac]);
    const prober = new TcpProber(metal.lan, metal.lan.client, [{ address: V6, port: SERVICE_PORT }]);
    await waitFor(
      "TCP over IPv6 to reach the elected node",
      () => prober.lastAnswer(V6)?.answer === elected.name,
    );
  },
  E2E_TIMEOUT_MS,
);
