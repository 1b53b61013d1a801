// Address conflict detection on the LAN: a foreign host (the LAN's client namespace, with an address of the
// pool configured on its interface, so its kernel answers ARP for it) keeps its address. The speaker elected for
// it probes before announcing, finds it in use, does not announce it and says so; the controller hands the
// Service the next free address, and the pool's status names the conflict.
import { CustomObjectsApi } from "@kubernetes/client-node";
import { beforeAll, onTestFinished } from "vitest";
import { SERVING_CONDITION } from "../../../controller/status.ts";
import { startPortico } from "../../harness/controller.ts";
import { expect, test, waitFor } from "../../harness/index.ts";
import { installCrds, renderOverlay } from "../../harness/manifests.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { createPool } from "../../harness/pools.ts";
import { arping } from "./clients.ts";
import { buildAddon, E2E_TIMEOUT_MS, MetalCluster, METAL_CLASS, SERVICE_PORT } from "./speakers.ts";

const TAKEN = "198.51.100.180";
const FREE = "198.51.100.181";

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

test(
  "an address a foreign host holds is not handed out: the Service gets the next one, the pool's status and an Event name the conflict",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [TAKEN, FREE],
      onCleanup: onTestFinished,
    });
    await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
    const foreign = metal.lan.client;
    await metal.lan.exec(foreign, "ip", ["addr", "add", `${TAKEN}/32`, "dev", foreign.iface]);
    const pool = await createPool(cluster, "lan", { addresses: [`${TAKEN}-${FREE}`] });
    await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL_CLASS });
    await metal.startSpeakers();

    const startedAt = Date.now();
    await cluster.createService("web", {
      type: "LoadBalancer",
      loadBalancerClass: METAL_CLASS,
      ports: [{ port: SERVICE_PORT, targetPort: SERVICE_PORT, protocol: "TCP" }],
    });
    const node = metal.nodes[0]!;
    await cluster.createEndpointSlice(
      "web",
      [{ ip: node.host.ipv4, nodeName: node.name }],
      [{ port: SERVICE_PORT }],
    );
    const moved = await waitFor("the Service to get the next free address", async () => {
      const ips = (await cluster.getService("web")).status?.loadBalancer?.ingress?.map((i) => i.ip);
      return ips?.join() === FREE && ips;
    });
    console.log(`the Service had a free address ${Date.now() - startedAt} ms after it was created`);
    expect(moved).toEqual([FREE]);

    const announcer = metal.electedFor(FREE);
    await waitFor("the free address to be announced", () => metal.announcersOf(FREE)[0] === announcer);
    expect(metal.nodes.filter((n) => n.owned.includes(TAKEN))).toEqual([]);
    const serving = await waitFor("Serving True for the free address", async () => {
      const c = (await cluster.getService("web")).status?.conditions?.find(
        (x) => x.type === SERVING_CONDITION,
      );
      return c?.status === "True" && c;
    });
    expect(serving.message).toContain(FREE);

    // The pool's status names the conflict, and so does a Warning Event on the Service.
    const condition = await waitFor("the pool's AddressesInUse condition", async () => {
      const status = (await pool.status()) as {
        conditions?: { type: string; status: string; message: string }[];
      };
      const c = status?.conditions?.find((x) => x.type === "AddressesInUse");
      return c?.status === "True" && c;
    });
    expect(condition.message).toContain(`${TAKEN} is in use on the LAN by ${foreign.mac}`);
    const events = await cluster.core.listNamespacedEvent({
      namespace: cluster.namespace,
      fieldSelector: "involvedObject.name=web,reason=AddressInUse",
    });
    expect(events.items.map((e) => [e.type, e.source?.component])).toContainEqual([
      "Warning",
      "portico-speaker",
    ]);
    expect(events.items[0]!.message).toContain(`${TAKEN} is in use on the LAN by ${foreign.mac}`);

    // The foreign host keeps its address: its own answer is the only one on the LAN.
    expect(await metal.lan.exec(foreign, "ip", ["-4", "addr", "show", "dev", foreign.iface])).toContain(
      TAKEN,
    );
    const answers = await arping(metal.nodes[1]!.host, TAKEN, 2);
    expect(new Set(answers.macs)).toEqual(new Set([foreign.mac]));
    // And the speakers' records say what they found.
    const records = (await cluster.kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: "portico.io",
      version: "v1alpha1",
      plural: "servicel2statuses",
      namespace: cluster.namespace,
    })) as { items: { status: { addresses?: string[] } }[] };
    expect(records.items.flatMap((r) => r.status.addresses ?? [])).toEqual([FREE]);
  },
  E2E_TIMEOUT_MS,
);

const TAKEN6 = "2001:db8:180::";
const FREE6 = "2001:db8:180::1";

test(
  "IPv6: duplicate address detection finds the foreign host's address, and the Service gets the next one",
  async ({ cluster }) => {
    const metal = await MetalCluster.create(cluster, {
      nodes: 3,
      addresses: [TAKEN6, FREE6],
      onCleanup: onTestFinished,
    });
    await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
    const foreign = metal.lan.client;
    await metal.lan.exec(foreign, "ip", [
      "-6",
      "addr",
      "add",
      `${TAKEN6}/128`,
      "dev",
      foreign.iface,
      "nodad",
    ]);
    const pool = await createPool(cluster, "lan6", { addresses: [`${TAKEN6}/127`] });
    await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL_CLASS });
    await metal.startSpeakers();
    await cluster.createService("web6", {
      type: "LoadBalancer",
      loadBalancerClass: METAL_CLASS,
      ipFamilies: ["IPv6"],
      ipFamilyPolicy: "SingleStack",
      ports: [{ port: SERVICE_PORT, targetPort: SERVICE_PORT, protocol: "TCP" }],
    });
    const node = metal.nodes[0]!;
    await cluster.createEndpointSlice(
      "web6",
      [{ ip: node.host.ipv6, nodeName: node.name }],
      [{ port: SERVICE_PORT }],
    );
    const moved = await waitFor("the Service to get the next free IPv6 address", async () => {
      const ips = (await cluster.getService("web6")).status?.loadBalancer?.ingress?.map((i) => i.ip);
      return ips?.join() === FREE6 && ips;
    });
    expect(moved).toEqual([FREE6]);
    await waitFor("the free address to be announced", () => metal.announcersOf(FREE6).length === 1);
    expect(metal.nodes.filter((n) => n.owned.includes(TAKEN6))).toEqual([]);
    const condition = await waitFor("the pool's AddressesInUse condition", async () => {
      const status = (await pool.status()) as {
        conditions?: { type: string; status: string; message: string }[];
      };
      const c = status?.conditions?.find((x) => x.type === "AddressesInUse");
      return c?.status === "True" && c;
    });
    expect(condition.message).toContain(`${TAKEN6} is in use on the LAN by ${foreign.mac}`);
    expect(await metal.lan.exec(foreign, "ip", ["-6", "addr", "show", "dev", foreign.iface])).toContain(
      TAKEN6,
    );
  },
  E2E_TIMEOUT_MS,
);
