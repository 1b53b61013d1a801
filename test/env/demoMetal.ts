// The demo's bare-metal LAN: network namespaces for three nodes and a client on a bridge, the real speaker
// in each node, and the metal controller's address for a Service announced to the client, which connects.
import { setTimeout as sleep } from "node:timers/promises";
import { arping, TcpProber } from "../integration/metal/clients.ts";
import { buildAddon, MetalCluster, SERVICE_PORT } from "../integration/metal/speakers.ts";
import { requireLanTools } from "../harness/netns.ts";
import type { TestCluster } from "../harness/kube.ts";
import { waitFor } from "../harness/wait.ts";

// The pool's last address: automatic assignment starts from the first, so the two never collide.
export const METAL_DEMO_ADDRESS = "192.0.2.209";

export interface MetalDemo {
  lines: string[];
  stop(): Promise<void>;
}

/** Returns undefined (and why) when this machine cannot build the LAN: not root, or a tool is missing. */
export async function startMetalLan(cluster: TestCluster): Promise<MetalDemo | string> {
  try {
    requireLanTools(["arping"]);
  } catch (err) {
    return (err as Error).message;
  }
  await buildAddon();
  const cleanups: (() => Promise<void>)[] = [];
  const metal = await MetalCluster.create(cluster, {
    nodes: 3,
    addresses: [METAL_DEMO_ADDRESS],
    onCleanup: (fn) => void cleanups.push(fn),
  });
  await metal.startSpeakers();
  await cluster.createService("hello-metal", {
    type: "LoadBalancer",
    loadBalancerClass: "portico.io/metal",
    loadBalancerIP: METAL_DEMO_ADDRESS,
    ports: [{ name: "hello", port: SERVICE_PORT, targetPort: SERVICE_PORT, protocol: "TCP" }],
  });
  await cluster.createEndpointSlice(
    "hello-metal",
    metal.nodes.map((n) => ({ ip: n.host.ipv4, nodeName: n.name })),
    [{ name: "hello", port: SERVICE_PORT }],
  );
  const announcer = await waitFor(
    "a speaker to announce the address",
    () => metal.announcersOf(METAL_DEMO_ADDRESS)[0],
    { timeoutMs: 60_000 },
  );
  await sleep(1500);
  const arp = await arping(metal.lan.client, METAL_DEMO_ADDRESS, 3);
  const prober = new TcpProber(
    metal.lan,
    metal.lan.client,
    [{ address: METAL_DEMO_ADDRESS, port: SERVICE_PORT }],
    200,
  );
  cleanups.push(() => prober.stop());
  const answer = await waitFor(
    "the client's TCP connection to be answered",
    () => prober.lastAnswer(METAL_DEMO_ADDRESS)?.answer,
    { timeoutMs: 30_000 },
  );
  return {
    lines: [
      `LAN: bridge in ${metal.lan.lanNamespace}; nodes ${metal.nodes.map((n) => `${n.name} (${n.host.ipv4})`).join(", ")}; client ${metal.lan.client.ipv4}`,
      `${announcer.name}'s speaker announces ${METAL_DEMO_ADDRESS} (elected by rendezvous hash among the live speakers)`,
      `arping ${METAL_DEMO_ADDRESS} from the client: ${arp.macs.length} answers, all from ${[...new Set(arp.macs)].join(", ")} (${announcer.name}'s MAC is ${announcer.mac}), ${arp.rttMs.map((ms) => ms.toFixed(2)).join("/")} ms`,
      `TCP from the client to ${METAL_DEMO_ADDRESS}:${SERVICE_PORT} is answered by: ${answer}`,
      `try it: ip netns exec ${metal.lan.client.namespace} arping -c 3 ${METAL_DEMO_ADDRESS}`,
    ],
    stop: async () => {
      for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
    },
  };
}
