// A BGP router on the local cluster's LAN: a namespace of its own plugged into the LAN's bridge (so the LAN's
// client is left as it is), with FRR peering with every node over iBGP and installing up to 16 equal paths,
// and a host behind it that reaches Service addresses only through the routes the router learned. The
// namespaces carry the LAN's prefix, so a later run sweeps them if this one is killed.
import { join } from "node:path";
import { FrrInstance, hostBehind } from "./frr.ts";
import { IP, LanProcess, sh, type LanHost, type TestLan } from "./netns.ts";

export const ROUTER_ASN = 64512;
/** The router's place on the LAN: the local cluster's hosts are .1 (gateway), .2 (client) and .11 on (nodes). */
export const ROUTER = { ipv4: "192.0.2.3", ipv6: "2001:db8::3" };
/** The network behind the router (frr.ts hostBehind). */
export const BEHIND = "198.18.0.0/24";

/** The router's kernel next hops for `address` (the routes zebra installed from BGP), sorted. */
export async function nextHops(router: LanHost, address: string): Promise<string[]> {
  const routes = JSON.parse(
    (await sh(IP, ["-j", "-n", router.namespace, "-4", "route", "show", address])) || "[]",
  ) as { gateway?: string; nexthops?: { gateway?: string }[] }[];
  return routes
    .flatMap((r) => (r.nexthops ? r.nexthops.map((h) => h.gateway) : [r.gateway]))
    .filter((g): g is string => typeof g === "string")
    .sort();
}

export interface BgpRouter {
  host: LanHost;
  frr: FrrInstance;
  /** The host behind the router. */
  behind: LanHost;
}

/**
 * Starts the router in the LAN of `lanNamespace`, peering with `nodes` (their LAN addresses); everything it
 * made is undone through `onCleanup`, last first as the caller runs them.
 */
export async function startRouter(
  lanNamespace: string,
  nodes: string[],
  logDir: string,
  onCleanup: (fn: () => Promise<void>) => void,
  /**
   * What the router hashes a new connection on to pick one of the equal paths: its ports too (5-tuple, as
   * datacenter routers spread flows; the default), or the addresses only (3-tuple: a client always reaches the
   * same node, which is what ClientIP session affinity through ECMP needs). MetalLB's documentation of BGP
   * mode describes both.
   */
  hash: "ports" | "addresses" = "ports",
): Promise<BgpRouter> {
  const namespace = lanNamespace.replace(/-lan$/, "-router");
  const id = lanNamespace.replace(/^ptm-/, "").replace(/-lan$/, "");
  const tag = id.slice(-4);
  await sh(IP, ["netns", "add", namespace]);
  onCleanup(() => sh(IP, ["netns", "del", namespace]).then(() => undefined));
  const [port, iface] = [`b${tag}rt`, `e${tag}rt`];
  await sh(IP, [
    "-n",
    lanNamespace,
    "link",
    "add",
    port,
    "type",
    "veth",
    "peer",
    "name",
    iface,
    "netns",
    namespace,
  ]);
  await sh(IP, ["-n", lanNamespace, "link", "set", port, "master", "br0", "up"]);
  await sh(IP, ["-n", namespace, "addr", "add", `${ROUTER.ipv4}/24`, "dev", iface]);
  await sh(IP, ["-n", namespace, "addr", "add", `${ROUTER.ipv6}/64`, "dev", iface, "nodad"]);
  for (const link of [iface, "lo"]) await sh(IP, ["-n", namespace, "link", "set", link, "up"]);
  const mac = (
    JSON.parse(await sh(IP, ["-j", "-n", namespace, "link", "show", iface])) as { address: string }[]
  )[0]!.address;
  const host: LanHost = {
    namespace,
    iface,
    ...ROUTER,
    mac,
    switchPort: { namespace: lanNamespace, iface: port },
  };
  // What FrrInstance and hostBehind use of a TestLan: its names, and starting processes in a namespace (the
  // caller need not own the LAN, which a global setup may have made).
  const processes: LanProcess[] = [];
  const lan = {
    id,
    lanNamespace,
    start(on: LanHost, name: string, command: string, args: string[], options = {}) {
      const proc = new LanProcess(name, join(logDir, `${name}.log`), on.namespace, command, args, options);
      processes.push(proc);
      return proc;
    },
  } as unknown as TestLan;
  onCleanup(async () => {
    await Promise.all(processes.map((p) => p.kill()));
  });
  const policy = hash === "ports" ? 1 : 0;
  await sh(IP, [
    "netns",
    "exec",
    namespace,
    "sysctl",
    "-q",
    "-w",
    `net.ipv4.fib_multipath_hash_policy=${policy}`,
  ]);
  const frr = await FrrInstance.start(lan, host, "router");
  onCleanup(() => Promise.resolve(frr.remove()));
  await frr.configure(
    [
      "frr defaults traditional",
      "hostname router",
      `router bgp ${ROUTER_ASN}`,
      ` bgp router-id ${ROUTER.ipv4}`,
      " no bgp default ipv4-unicast",
      ...nodes.flatMap((address) => [
        ` neighbor ${address} remote-as ${ROUTER_ASN}`,
        ` neighbor ${address} timers 3 9`,
      ]),
      " address-family ipv4 unicast",
      "  maximum-paths ibgp 16",
      ...nodes.map((address) => `  neighbor ${address} activate`),
      " exit-address-family",
      "exit",
      "",
    ].join("\n"),
  );
  const behind = await hostBehind(lan, host, onCleanup);
  return { host, frr, behind };
}
