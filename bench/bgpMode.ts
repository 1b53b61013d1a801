// The BGP mode for the local-cluster benchmarks, as test/e2e/bgp.test.ts sets it up: a router on the LAN that every
// node's speaker peers with (through a BGPPeer), a pool off the LAN advertised to it (a BGPAdvertisement), and a
// client behind the router, which reaches a Service's address only over the routes the router learned (ECMP over
// every node, its flows hashed on their ports).
import { mkdir } from "node:fs/promises";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { BEHIND, nextHops, ROUTER, ROUTER_ASN, startRouter } from "../test/harness/bgpRouter.ts";
import type { E2eContext } from "../test/harness/e2eSetup.ts";
import type { E2eNamespace } from "../test/harness/localCluster/usage.ts";
import { IP, sh } from "../test/harness/netns.ts";
import { waitFor } from "../test/harness/wait.ts";

/** TEST-NET-2, off the LAN: reached only through the router. */
export const BGP_POOL = "198.51.100.0/28";
const API = { group: "portico.io", version: "v1alpha1" } as const;

export interface BgpMode {
  /** The cluster as seen by the client behind the router (for ClientLoad and LongLivedLoad). */
  behind: E2eContext;
  /** The pool a Service names (`portico.io/address-pool`) to be announced over BGP. */
  pool: string;
  /** Resolves once the router routes `address` over every node. */
  routedOverEveryNode(address: string): Promise<void>;
}

/** Starts the router and the BGP objects; `cleanups` gets what undoes them, to run last first. */
export async function startBgpMode(
  ns: E2eNamespace,
  logDir: string,
  cleanups: (() => Promise<void>)[],
): Promise<BgpMode> {
  const { context, name } = ns;
  const defer = (fn: () => Promise<void>) => {
    cleanups.push(fn);
  };
  await mkdir(logDir, { recursive: true });
  const router = await startRouter(
    context.client.switchPort.namespace,
    context.nodes.map((n) => n.host.ipv4),
    logDir,
    defer,
  );
  // Replies to the client behind the router go back through it, as a node's default route would take them.
  for (const node of context.nodes) {
    await sh(IP, ["-n", node.host.namespace, "route", "add", BEHIND, "via", ROUTER.ipv4]);
    defer(() => sh(IP, ["-n", node.host.namespace, "route", "del", BEHIND]).then(() => undefined));
  }
  const custom = ns.kc.makeApiClient(CustomObjectsApi);
  const create = async (plural: string, kind: string, objectName: string, spec: object) => {
    await custom.createClusterCustomObject({
      ...API,
      plural,
      body: { apiVersion: `${API.group}/${API.version}`, kind, metadata: { name: objectName }, spec },
    });
    defer(() =>
      custom
        .deleteClusterCustomObject({ ...API, plural, name: objectName })
        .then(() => undefined)
        .catch(() => undefined),
    );
  };
  const pool = `${name}-bgp`;
  await create("ipaddresspools", "IPAddressPool", pool, { addresses: [BGP_POOL], autoAssign: false });
  await create("bgppeers", "BGPPeer", `${name}-router`, {
    myASN: ROUTER_ASN,
    peerASN: ROUTER_ASN,
    peerAddress: ROUTER.ipv4,
    connectTime: "2s",
    // As a user who wants the speakers' rolling updates hitless writes it: the router keeps a node's routes
    // while its speaker's pod is replaced.
    enableGracefulRestart: true,
  });
  await create("bgpadvertisements", "BGPAdvertisement", pool, { ipAddressPools: [pool] });
  const nodes = context.nodes.map((n) => n.host.ipv4).sort();
  return {
    behind: { ...context, client: router.behind },
    pool,
    routedOverEveryNode: async (address) => {
      await waitFor(
        `the router to route ${address} over every node`,
        async () => (await nextHops(router.host, address)).join() === nodes.join() || undefined,
        { timeoutMs: 180_000, intervalMs: 500 },
      );
    },
  };
}
