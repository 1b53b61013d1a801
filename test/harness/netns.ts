// A real Ethernet LAN made of network namespaces, for the bare-metal tests: a bridge in a "lan" namespace,
// one namespace per node and one for a client, each joined to the bridge by a veth pair and numbered in the
// documentation ranges 192.0.2.0/24 and 2001:db8::/64. Nothing leaves the namespaces made here. Names carry
// the creating process id and a random tag, so parallel runs never collide, and a later run removes what a
// killed run left behind. Processes run inside a namespace under `setpriv --pdeathsig KILL`, so they die
// with the test process whatever happens.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { EnvironmentError } from "./errors.ts";

const run = promisify(execFile);
export const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].find((path) => existsSync(path)) ?? "ip";
const SETPRIV = "/usr/bin/setpriv";
const PREFIX = "ptm";

export interface LanHost {
  readonly namespace: string;
  /** The host's end of its veth pair. */
  readonly iface: string;
  readonly ipv4: string;
  readonly ipv6: string;
  readonly mac: string;
  /** The switch's end of the cable: the veth's other end, a port of the bridge in the LAN namespace. */
  readonly switchPort: { namespace: string; iface: string };
}

export interface LanOptions {
  nodes: number;
  /**
   * Make the bridge behave like a switch with MLD snooping: it queries for listeners and forwards IPv6
   * multicast to a node only for groups the node reported (node ports get no unregistered multicast).
   * By default the bridge floods multicast like an unmanaged switch.
   */
  mldSnooping?: boolean;
  /**
   * An address of the LAN's own, 192.0.2.1, on the bridge in the "lan" namespace: where the LAN reaches
   * services of the test machine forwarded in with `forward` (the kube-apiserver, the cloud emulators).
   */
  gateway?: boolean;
}

export const LAN_GATEWAY = "192.0.2.1";

/** Runs `ip` (or any command) and returns stdout; failures say which command failed and why. */
export async function sh(command: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const { stdout } = await run(command, args, { timeout: timeoutMs, maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${(e.stderr ?? "").trim() || e.message}`, {
      cause: err,
    });
  }
}

/** A veth pair: `name` in `namespace`, its peer `peer` moved into `peerNamespace`. */
export async function vethPair(
  namespace: string,
  name: string,
  peer: string,
  peerNamespace: string,
): Promise<void> {
  await sh(IP, [
    "-n",
    namespace,
    "link",
    "add",
    name,
    "type",
    "veth",
    "peer",
    "name",
    peer,
    "netns",
    peerNamespace,
  ]);
}

/** Root, `ip`, and the client tools the tests use; one line saying what is missing otherwise. */
export function requireLanTools(tools: string[] = []): void {
  if (process.getuid?.() !== 0)
    throw new EnvironmentError("the bare-metal tests need root (network namespaces)");
  for (const tool of [IP, ...tools]) {
    const found = tool.startsWith("/")
      ? existsSync(tool)
      : (process.env.PATH ?? "").split(":").some((dir) => existsSync(join(dir, tool)));
    if (!found)
      throw new EnvironmentError(`${tool} is missing: apt-get install -y ${DEBIAN_PACKAGES[tool] ?? tool}`);
  }
}

const DEBIAN_PACKAGES: Record<string, string> = {
  arping: "arping",
  ndisc6: "ndisc6",
  setpriv: "util-linux",
  tcpdump: "tcpdump",
  "/usr/lib/frr/bgpd": "frr",
  vtysh: "frr",
};

/** Removes namespaces left by test processes that no longer exist (a run killed before its clean-up). */
async function sweepStale(): Promise<void> {
  const listing = await sh(IP, ["netns", "list"]).catch(() => "");
  for (const line of listing.split("\n")) {
    const name = line.split(" ")[0] ?? "";
    const match = new RegExp(`^${PREFIX}-(\\d+)-`).exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (alive) continue;
    // Most processes die with the test (parent-death signal), but daemons that drop root (FRR's) lose that
    // signal when they change user: whatever still runs in the namespace goes with it.
    const pids = await sh(IP, ["netns", "pids", name]).catch(() => "");
    for (const stale of pids.split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(stale), "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    await sh(IP, ["netns", "del", name]).catch(() => undefined);
    // A namespace's own resolver configuration, if a run gave it one (cloudEdge/edgeDns.ts).
    rmSync(join("/etc/netns", name), { recursive: true, force: true });
  }
}

export class TestLan {
  readonly id: string;
  readonly lanNamespace: string;
  readonly nodes: LanHost[] = [];
  client!: LanHost;
  /** Logs of the processes started in the LAN; kept when PORTICO_KEEP_RUN=1. */
  readonly logDir: string;
  private readonly namespaces: string[] = [];
  private readonly processes: LanProcess[] = [];
  private readonly forwards: Forward[] = [];
  private destroyed = false;

  private constructor() {
    const tag = randomBytes(2).toString("hex");
    this.id = `${process.pid}-${tag}`;
    this.lanNamespace = `${PREFIX}-${this.id}-lan`;
    this.logDir = mkdtempSync(join(tmpdir(), `portico-lan-${tag}-`));
  }

  /** Builds the LAN; on any failure whatever was made is removed before the error is thrown. */
  static async create(options: LanOptions): Promise<TestLan> {
    requireLanTools();
    await sweepStale();
    const lan = new TestLan();
    try {
      await lan.build(options);
    } catch (err) {
      await lan.destroy();
      throw err;
    }
    return lan;
  }

  private async build(options: LanOptions): Promise<void> {
    await this.addNamespace(this.lanNamespace);
    const lan = this.lanNamespace;
    // The bridge's MLD querier needs its own link-local address, so no duplicate address detection here.
    const noDad = ["net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"];
    await sh(IP, ["netns", "exec", lan, "sysctl", "-q", "-w", ...noDad]);
    const snooping = options.mldSnooping
      ? ["mcast_snooping", "1", "mcast_query_response_interval", "100", "mcast_query_interval", "100"]
      : ["mcast_snooping", "0"];
    await sh(IP, ["-n", lan, "link", "add", "br0", "type", "bridge", ...snooping]);
    await sh(IP, ["-n", lan, "link", "set", "br0", "up"]);
    if (options.gateway) await sh(IP, ["-n", lan, "addr", "add", `${LAN_GATEWAY}/24`, "dev", "br0"]);
    this.client = await this.addHost("client", "c", 2);
    for (let i = 0; i < options.nodes; i++) {
      this.nodes.push(await this.addHost(`n${i}`, `n${i}`, 11 + i));
      if (options.mldSnooping) {
        const port = `b${this.id.slice(-4)}n${i}`;
        await sh(IP, ["-n", lan, "link", "set", "dev", port, "type", "bridge_slave", "mcast_flood", "off"]);
      }
    }
    if (options.mldSnooping) await this.startQuerier();
  }

  /**
   * Starts the bridge's MLD querier once the bridge has its link-local address (a querier started earlier
   * never queries) and waits until multicast is forwarded by membership: a Neighbor Solicitation from the
   * client for a node's own address gets answered.
   */
  private async startQuerier(): Promise<void> {
    await sh(IP, ["-n", this.lanNamespace, "link", "set", "br0", "type", "bridge", "mcast_querier", "1"]);
    const node = this.nodes[0];
    if (!node) return;
    const deadline = Date.now() + 20_000;
    const probe = ["netns", "exec", this.client.namespace, "ndisc6", "-q", "-r", "1", "-w", "300"];
    while (!(await sh(IP, [...probe, node.ipv6, this.client.iface]).catch(() => "")).trim()) {
      if (Date.now() > deadline)
        throw new Error("the bridge's MLD querier did not start forwarding within 20s");
    }
  }

  private async addNamespace(name: string): Promise<void> {
    await sh(IP, ["netns", "add", name]);
    this.namespaces.push(name);
    await sh(IP, ["-n", name, "link", "set", "lo", "up"]);
  }

  private async addHost(label: string, short: string, hostNumber: number): Promise<LanHost> {
    const namespace = `${PREFIX}-${this.id}-${label}`;
    await this.addNamespace(namespace);
    const tag = this.id.slice(-4);
    const bridgeSide = `b${tag}${short}`;
    const iface = `e${tag}${short}`;
    const n = this.lanNamespace;
    await vethPair(n, bridgeSide, iface, namespace);
    await sh(IP, ["-n", n, "link", "set", bridgeSide, "master", "br0", "up"]);
    const ipv4 = `192.0.2.${hostNumber}`;
    const ipv6 = `2001:db8::${hostNumber.toString(16)}`;
    await sh(IP, ["-n", namespace, "addr", "add", `${ipv4}/24`, "dev", iface]);
    await sh(IP, ["-n", namespace, "addr", "add", `${ipv6}/64`, "dev", iface, "nodad"]);
    await sh(IP, ["-n", namespace, "link", "set", iface, "up"]);
    const link = JSON.parse(await sh(IP, ["-j", "-n", namespace, "link", "show", iface])) as {
      address: string;
    }[];
    const switchPort = { namespace: n, iface: bridgeSide };
    return { namespace, iface, ipv4, ipv6, mac: link[0]!.address, switchPort };
  }

  /** Takes a host's link down (a cable pulled, a partition) or up again. */
  async setLink(host: LanHost, up: boolean): Promise<void> {
    await sh(IP, ["-n", host.namespace, "link", "set", host.iface, up ? "up" : "down"]);
  }

  /** Runs a command inside a namespace and returns its stdout. */
  exec(host: LanHost | string, command: string, args: string[], timeoutMs?: number): Promise<string> {
    const namespace = typeof host === "string" ? host : host.namespace;
    return sh(IP, ["netns", "exec", namespace, command, ...args], timeoutMs);
  }

  /** Starts a long-running process in a namespace; stdout lines go to `onLine` and to its log. */
  start(
    host: LanHost,
    name: string,
    command: string,
    args: string[],
    options: { onLine?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
  ): LanProcess {
    return this.startIn(host.namespace, name, command, args, options);
  }

  private startIn(
    namespace: string,
    name: string,
    command: string,
    args: string[],
    options: { onLine?: (line: string) => void; env?: NodeJS.ProcessEnv } = {},
  ): LanProcess {
    const proc = new LanProcess(name, join(this.logDir, `${name}.log`), namespace, command, args, options);
    this.processes.push(proc);
    return proc;
  }

  /**
   * Makes the kube-apiserver, which listens on 127.0.0.1 of the root namespace, reachable at the same
   * address and port inside `host` (see `forward`). TLS runs end to end, so the kubeconfig works unchanged.
   */
  forwardApiserver(host: LanHost, port: number): Promise<void> {
    return this.forward(host.namespace, { host: "127.0.0.1", port }, port);
  }

  /** `forwardInto` a namespace of this LAN, stopped with it. */
  async forward(
    namespace: string,
    listen: { host: string; port: number },
    targetPort: number,
  ): Promise<void> {
    this.forwards.push(await forwardInto(namespace, listen, targetPort, this.logDir));
  }

  /** Stops every process (SIGKILL), then removes the namespaces and with them every veth. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(this.processes.map((p) => p.kill()));
    await Promise.all(this.forwards.map((f) => f.stop()));
    for (const namespace of this.namespaces.reverse())
      await sh(IP, ["netns", "del", namespace]).catch(() => undefined);
    if (process.env.PORTICO_KEEP_RUN !== "1") rmSync(this.logDir, { recursive: true, force: true });
  }
}

/**
 * Pulls a host's cable at the switch (or plugs it back): the host sees its carrier go, as a real one would,
 * and keeps its addresses and routes, which taking its own interface down would delete.
 */
export async function setCable(host: LanHost, plugged: boolean): Promise<void> {
  const port = host.switchPort;
  await sh(IP, ["-n", port.namespace, "link", "set", port.iface, plugged ? "up" : "down"]);
}

export interface Forward {
  stop(): Promise<void>;
}

/**
 * Makes a TCP service listening on 127.0.0.1:`targetPort` of the root namespace reachable at `listen`
 * inside `namespace`: a forwarder there tunnels each connection through a Unix socket in `dir` (file-system
 * sockets cross namespaces) to this process, which connects to the real service. The root namespace's
 * network is never touched. Usable from any process; the forwarder dies with it.
 */
export async function forwardInto(
  namespace: string,
  listen: { host: string; port: number },
  targetPort: number,
  dir: string,
): Promise<Forward> {
  const name = `forward-${namespace}-${listen.port}`;
  const socketPath = join(dir, `${name}.sock`);
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(socketPath, resolve));
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = new LanProcess(
    name,
    join(dir, `${name}.log`),
    namespace,
    process.execPath,
    ["-e", FORWARDER, String(listen.port), listen.host, socketPath],
    { onLine: (line) => line === "listening" && listening() },
  );
  const stop = async () => {
    await proc.kill();
    server.close();
  };
  await Promise.race([
    ready,
    proc.exited.then((code) => Promise.reject(new Error(`forwarder exited (${code}): ${proc.tail()}`))),
  ]).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return { stop };
}

const FORWARDER = `
const net = require("node:net");
const [port, host, path] = process.argv.slice(1);
net.createServer((c) => {
  const u = net.connect(path);
  c.pipe(u).pipe(c);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
}).listen(Number(port), host, () => console.log("listening"));`;

/** A process inside a LAN namespace. */
export class LanProcess {
  readonly name: string;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private exitCode: number | null | undefined;

  constructor(
    name: string,
    logFile: string,
    namespace: string,
    command: string,
    args: string[],
    options: { onLine?: (line: string) => void; env?: NodeJS.ProcessEnv },
  ) {
    this.name = name;
    this.logFile = logFile;
    const argv = [IP, "netns", "exec", namespace, command, ...args];
    const [file, rest] = existsSync(SETPRIV)
      ? [SETPRIV, ["--pdeathsig", "KILL", "--", ...argv]]
      : [IP, argv.slice(1)];
    const log = createWriteStream(logFile, { flags: "a" });
    this.child = spawn(file, rest, { stdio: ["ignore", "pipe", "pipe"], env: options.env ?? process.env });
    this.child.stderr!.pipe(log, { end: false });
    this.exited = new Promise((resolve) => {
      this.child.once("close", (code, signal) => {
        log.end();
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      });
    });
    const reader = createInterface({ input: this.child.stdout! });
    reader.on("line", (line) => {
      log.write(`${line}\n`);
      this.lines.push(line);
      if (this.lines.length > 200) this.lines.shift();
      options.onLine?.(line);
    });
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last lines of standard output, for failure messages. */
  tail(count = 5): string {
    return this.lines.slice(-count).join(" | ");
  }

  async signal(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    if (!this.running) return;
    this.child.kill(signal);
    await this.exited;
  }

  kill(): Promise<void> {
    return this.signal("SIGKILL");
  }
}
