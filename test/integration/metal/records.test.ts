// What bare metal puts on record, end to end: the real controller allocates and records the pool an address
// came from, the real speakers on a LAN of namespaces read that record instead of guessing between overlapping
// pools, the announcing speaker records where it answers (ServiceL2Status), and the controller's Serving
// condition follows those records, through a failover and to a pool no node may announce.
import { beforeAll, onTestFinished } from "vitest";
import { SERVING_CONDITION } from "../../../controller/status.ts";
import { ANNOTATIONS } from "../../../providers/registry.ts";
import { startPortico } from "../../harness/controller.ts";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { installCrds, renderOverlay } from "../../harness/manifests.ts";
import { requireLanTools } from "../../harness/netns.ts";
import { createPool } from "../../harness/pools.ts";
import { arping } from "./clients.ts";
import {
  buildAddon,
  E2E_TIMEOUT_MS,
  MetalCluster,
  METAL_CLASS,
  SERVICE_PORT,
  type MetalNode,
} from "./speakers.ts";

const V4 = "198.51.100.170";
const RIGHT = "test.portico.io/right-pool";
const WRONG = "test.portico.io/wrong-pool";

beforeAll(async () => {
  requireLanTools(["arping"]);
  await buildAddon();
}, 180_000);

async function label(cluster: TestCluster, node: MetalNode, labels: Record<string, string | null>) {
  await cluster.core.patchNode({ name: node.name, body: { metadata: { labels } } }, mergePatch);
}

async function serving(cluster: TestCluster, name: string) {
  return (await cluster.getService(name)).status?.conditions?.find((c) => c.type === SERVING_CONDITION);
}

/** Three nodes on the LAN, the metal CRDs, a controller of the test's namespace, and a Service of V4. */
async function setUp(cluster: TestCluster) {
  const metal = await MetalCluster.create(cluster, { nodes: 3, addresses: [V4], onCleanup: onTestFinished });
  await installCrds(cluster.kubeConfig, await renderOverlay("metal"));
  return metal;
}

async function createWeb(cluster: TestCluster, endpointNode: MetalNode) {
  await cluster.createService("web", {
    type: "LoadBalancer",
    loadBalancerClass: METAL_CLASS,
    ports: [{ port: SERVICE_PORT, targetPort: SERVICE_PORT, protocol: "TCP" }],
  });
  await cluster.createEndpointSlice(
    "web",
    [{ ip: endpointNode.host.ipv4, nodeName: endpointNode.name }],
    [{ port: SERVICE_PORT }],
  );
}

test(
  "the controller records the pool an address came from, and the speakers follow the record, not a guess, between overlapping pools",
  async ({ cluster }) => {
    expect(
      ANNOTATIONS.entryFor("portico.io/ip-allocated-from-pool"),
      "the annotation catalog (providers/annotationKeys/portico.ts) must know portico.io/ip-allocated-from-pool before the controller records it",
    ).toBeDefined();
    const metal = await setUp(cluster);
    // The node a guess would pick (the overlapping pool's only node) is never one the right pool allows.
    const [wrongNode, first, second] = [metal.nodes[0]!, metal.nodes[1]!, metal.nodes[2]!];
    await label(cluster, wrongNode, { [WRONG]: "true" });
    await label(cluster, first, { [RIGHT]: "true" });
    await label(cluster, second, { [RIGHT]: "true" });
    // Two overlapping pools. The preferred one serves no namespace (a namespace selector matching none, which
    // the speaker cannot evaluate: it does not watch Namespaces), so the controller takes the other; a speaker
    // guessing would take the preferred one and let only wrongNode announce.
    const wrong = await createPool(cluster, "wrong", {
      addresses: [`${V4}/32`],
      nodeSelectors: [{ matchLabels: { [WRONG]: "true" } }],
      serviceAllocation: {
        priority: 1,
        namespaces: [],
        namespaceSelectors: [{ matchLabels: { "test.portico.io/never": "true" } }],
      },
    });
    const right = await createPool(cluster, "right", {
      addresses: [`${V4}/32`],
      nodeSelectors: [{ matchLabels: { [RIGHT]: "true" } }],
      serviceAllocation: { priority: 2 },
    });
    expect(wrong.name).not.toBe(right.name);
    await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL_CLASS });
    await metal.startSpeakers();
    await createWeb(cluster, first);
    const svc = await waitFor("the controller to assign the address and record its pool", async () => {
      const s = await cluster.getService("web");
      return s.metadata?.annotations?.["portico.io/ip-allocated-from-pool"] ? s : undefined;
    });
    expect(svc.status?.loadBalancer?.ingress?.map((i) => i.ip)).toEqual([V4]);
    expect(svc.metadata?.annotations?.["portico.io/ip-allocated-from-pool"]).toBe(right.name);

    const announcer = metal.electedFor(V4, [first, second]);
    await waitFor("the right pool's elected node alone to announce", () => {
      const now = metal.announcersOf(V4);
      return now.length === 1 && now[0] === announcer;
    });
    expect(wrongNode.owned).toEqual([]);
    expect((await arping(metal.lan.client, V4, 2)).macs.every((mac) => mac === announcer.mac)).toBe(true);
  },
  E2E_TIMEOUT_MS,
);

test(
  "the announcer records itself, and Serving follows the records through a failover to NotAnnounced",
  async ({ cluster }) => {
    const metal = await setUp(cluster);
    const [first, second, unlabelled] = [metal.nodes[0]!, metal.nodes[1]!, metal.nodes[2]!];
    await label(cluster, first, { [RIGHT]: "true" });
    await label(cluster, second, { [RIGHT]: "true" });
    await createPool(cluster, "right", {
      addresses: [`${V4}/32`],
      nodeSelectors: [{ matchLabels: { [RIGHT]: "true" } }],
    });
    await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL_CLASS });
    await metal.startSpeakers();
    await createWeb(cluster, first);

    const announcer = metal.electedFor(V4, [first, second]);
    const standby = announcer === first ? second : first;
    await waitFor("the elected node alone to announce", () => {
      const now = metal.announcersOf(V4);
      return now.length === 1 && now[0] === announcer;
    });
    expect(unlabelled.owned).toEqual([]);
    // The announcer's record: node, interface, address, owned by the Service.
    const [record, ...others] = await waitFor("the announcer's ServiceL2Status", async () => {
      const all = await metal.l2Records();
      return all.some((r) => r.status.node === announcer.name) && all;
    });
    expect(others).toEqual([]);
    expect(record!.status).toMatchObject({ node: announcer.name, serviceName: "web", addresses: [V4] });
    expect(record!.status.interfaces?.map((i) => i.name)).toContain(announcer.host.iface);
    expect(record!.metadata.ownerReferences).toMatchObject([{ kind: "Service", name: "web" }]);

    const announced = await waitFor("Serving True", async () => {
      const c = await serving(cluster, "web");
      if (c?.status === "True") return c;
      throw new Error(JSON.stringify((await cluster.getService("web")).status?.conditions));
    });
    expect(announced).toMatchObject({ reason: "Announced" });
    expect(announced.message).toContain(`${V4} by node ${announcer.name} on`);
    expect(announced.message).toContain(announcer.host.iface);

    // Failover: the standby takes over, replaces the dead speaker's record, and Serving names it.
    const killedAt = Date.now();
    await announcer.kill();
    await waitFor("the standby to record that it announces, alone", async () => {
      const all = await metal.l2Records();
      return all.length === 1 && all[0]!.status.node === standby.name;
    });
    const moved = await waitFor("Serving to name the new announcer", async () => {
      const c = await serving(cluster, "web");
      return c?.status === "True" && c.message?.includes(`node ${standby.name}`) && c;
    });
    console.log(`Serving named the new announcer ${Date.now() - killedAt} ms after the announcer was killed`);
    expect(moved.reason).toBe("Announced");
    // On a busy machine an ARP exchange can time out: asked again until one is answered, only ever by the standby.
    const answered = await waitFor("the standby to answer ARP", async () => {
      const { macs } = await arping(metal.lan.client, V4, 2);
      return macs.length > 0 && macs;
    });
    expect(new Set(answered)).toEqual(new Set([standby.mac]));

    // No node may announce the right pool any more: nobody does, and Serving says why, with a Warning.
    await label(cluster, standby, { [RIGHT]: null });
    const refused = await waitFor("Serving False", async () => {
      const c = await serving(cluster, "web");
      return c?.status === "False" && c;
    });
    expect(refused.reason).toBe("NotAnnounced");
    expect(refused.message).toMatch(/no node that may announce it matches the nodeSelectors/);
    // The Event is written after the status, so it may be listed a moment later.
    const warnings = await waitFor("the NotAnnounced Event", async () => {
      const events = await cluster.core.listNamespacedEvent({
        namespace: cluster.namespace,
        fieldSelector: "involvedObject.name=web,reason=NotAnnounced",
      });
      return events.items.length > 0 && events.items;
    });
    expect(warnings.map((e) => e.type)).toContain("Warning");
    expect((await metal.l2Records()).flatMap((r) => r.status.addresses ?? [])).toEqual([]);
  },
  E2E_TIMEOUT_MS,
);
