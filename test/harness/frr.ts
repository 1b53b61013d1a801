// FRR for the BGP tests: one instance per network namespace (zebra, bgpd and bfdd, each with its own vty
// socket directory, so instances never see each other), as on a node beside the speaker or on a router. A node's
// instance is driven by the speaker through the FRR agent of manifests/speaker/frr, exactly as in the
// DaemonSet; a router's is configured by the test with FRR's own frr-reload.py.
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { IP, sh, type LanHost, type LanProcess, type TestLan } from "./netns.ts";
import { waitFor } from "./wait.ts";

const DAEMONS = "/usr/lib/frr";
export const FRR_AGENT = fileURLToPath(
  new URL("../../manifests/speaker/frr/portico-frr-agent.py", import.meta.url),
);
const RELOAD = `${DAEMONS}/frr-reload.py`;

function frrIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync("id", ["-u", "frr"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "frr"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

export class FrrInstance {
  readonly namespace: string;
  readonly name: string;
  /** The vty sockets and the agent's files (frr.conf, status.json). */
  readonly dir: string;
  private readonly lan: TestLan;
  private readonly host: LanHost;
  private readonly processes: LanProcess[] = [];

  private constructor(lan: TestLan, host: LanHost, name: string) {
    this.lan = lan;
    this.host = host;
    this.namespace = host.namespace;
    this.name = name;
    this.dir = mkdtempSync(join(tmpdir(), `portico-frr-${name}-`));
    // The daemons drop root for the frr user: it must own their directory.
    const { uid, gid } = frrIds();
    chownSync(this.dir, uid, gid);
    chmodSync(this.dir, 0o775);
  }

  /** Starts zebra, bgpd and bfdd in the host's namespace with an empty configuration. */
  static async start(lan: TestLan, host: LanHost, name: string): Promise<FrrInstance> {
    if (userInfo().uid !== 0) throw new Error("FRR's daemons need root (they drop to the frr user)");
    const frr = new FrrInstance(lan, host, name);
    const common = (daemon: string) => [
      "--vty_socket",
      frr.dir,
      "-z",
      join(frr.dir, "zserv.api"),
      "-i",
      join(frr.dir, `${daemon}.pid`),
      "-f",
      "/dev/null",
      "--log",
      "stdout",
    ];
    frr.processes.push(lan.start(host, `${name}-zebra`, `${DAEMONS}/zebra`, common("zebra")));
    await waitFor(`${name}: zebra's socket`, () => frr.vtysh("show version").then(() => true), {
      timeoutMs: 20_000,
    });
    frr.processes.push(lan.start(host, `${name}-bgpd`, `${DAEMONS}/bgpd`, common("bgpd")));
    frr.processes.push(
      lan.start(host, `${name}-bfdd`, `${DAEMONS}/bfdd`, [
        ...common("bfdd"),
        "--bfdctl",
        join(frr.dir, "bfdd.sock"),
      ]),
    );
    await waitFor(
      `${name}: bgpd and bfdd to answer`,
      async () => {
        await frr.vtysh("show bgp summary json");
        await frr.vtysh("show bfd peers json");
        return true;
      },
      { timeoutMs: 20_000 },
    );
    return frr;
  }

  /** Runs one vtysh command against this instance. */
  vtysh(command: string): Promise<string> {
    return sh(
      IP,
      ["netns", "exec", this.namespace, "vtysh", "--vty_socket", this.dir, "-c", command],
      20_000,
    );
  }

  async json<T>(command: string): Promise<T> {
    return JSON.parse(await this.vtysh(command)) as T;
  }

  /** Applies a whole configuration with frr-reload.py (a router's, written by the test). */
  async configure(text: string): Promise<void> {
    const file = join(this.dir, "router.conf");
    writeFileSync(file, text);
    await sh(
      IP,
      [
        "netns",
        "exec",
        this.namespace,
        "python3",
        RELOAD,
        "--reload",
        "--stdout",
        "--vty_socket",
        this.dir,
        "--bindir",
        "/usr/bin",
        "--confdir",
        this.dir,
        "--rundir",
        this.dir,
        file,
      ],
      60_000,
    );
  }

  /** Starts the FRR agent the DaemonSet runs beside FRR, on this instance. */
  startAgent(): LanProcess {
    const proc = this.lan.start(this.host, `${this.name}-agent`, "python3", [FRR_AGENT], {
      env: {
        ...process.env,
        PORTICO_FRR_DIR: this.dir,
        FRR_VTY_SOCKET: this.dir,
        PORTICO_FRR_STATUS_MS: "300",
      },
    });
    this.processes.push(proc);
    return proc;
  }

  /** Removes the instance's directory (after its processes are gone); kept with PORTICO_KEEP_RUN=1. */
  remove(): void {
    if (process.env.PORTICO_KEEP_RUN !== "1") rmSync(this.dir, { recursive: true, force: true });
  }

  /** Kills every daemon and the agent at once, as a node's crash would. */
  async kill(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.kill()));
  }
}

/**
 * A host behind `router`, on a link of its own (198.18.0.0/24 and 2001:db8:ff::/64, the benchmarking range):
 * the client of the BGP tests, which reaches Service addresses only through the routes the router learned.
 * Its namespace carries the LAN's prefix, so a later run removes it if this one is killed.
 */
export async function hostBehind(
  lan: TestLan,
  router: LanHost,
  onCleanup: (fn: () => Promise<void>) => void,
): Promise<LanHost> {
  const namespace = lan.lanNamespace.replace(/-lan$/, "-far");
  await sh(IP, ["netns", "add", namespace]);
  onCleanup(async () => {
    await sh(IP, ["netns", "del", namespace]).catch(() => undefined);
  });
  const tag = lan.id.slice(-4);
  const [near, far] = [`r${tag}`, `f${tag}`];
  await sh(IP, [
    "-n",
    router.namespace,
    "link",
    "add",
    near,
    "type",
    "veth",
    "peer",
    "name",
    far,
    "netns",
    namespace,
  ]);
  for (const [ns, iface, v4, v6] of [
    [router.namespace, near, "198.18.0.1/24", "2001:db8:ff::1/64"],
    [namespace, far, "198.18.0.2/24", "2001:db8:ff::2/64"],
  ] as const) {
    await sh(IP, ["-n", ns, "addr", "add", v4, "dev", iface]);
    await sh(IP, ["-n", ns, "addr", "add", v6, "dev", iface, "nodad"]);
    await sh(IP, ["-n", ns, "link", "set", iface, "up"]);
  }
  await sh(IP, ["-n", namespace, "link", "set", "lo", "up"]);
  await sh(IP, ["-n", namespace, "route", "add", "default", "via", "198.18.0.1"]);
  await sh(IP, ["-n", namespace, "-6", "route", "add", "default", "via", "2001:db8:ff::1"]);
  // Forwarding inside the router's namespace only (these sysctls are per namespace).
  await sh(IP, [
    "netns",
    "exec",
    router.namespace,
    "sysctl",
    "-q",
    "-w",
    "net.ipv4.ip_forward=1",
    "net.ipv6.conf.all.forwarding=1",
  ]);
  const link = JSON.parse(await sh(IP, ["-j", "-n", namespace, "link", "show", far])) as {
    address: string;
  }[];
  return {
    namespace,
    iface: far,
    ipv4: "198.18.0.2",
    ipv6: "2001:db8:ff::2",
    mac: link[0]!.address,
    switchPort: { namespace: router.namespace, iface: near },
  };
}
