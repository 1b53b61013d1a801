// A real Ethernet LAN made of network namespaces, for the bare-metal tests: a bridge in a "lan" namespace,
// one namespace per node and one for a client, each joined to the bridge by a veth pair and numbered in the
// documentation ranges 192.0.2.0/24 and 2001:db8::/64. Nothing leaves the namespaces made here. Names carry
// the creating process id and a random tag, so parallel runs never collide, and a later run removes what a
// killed run left behind. Processes run inside a namespace under `setpriv --pdeathsig KILL`, so they die
// with the test process whatever happens.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { EnvironmentError } from "./errors.ts";

const run = promisify(execFile);
const IP = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].find((path) => existsSync(path)) ?? "ip";
const SETPRIV = "/usr/bin/setpriv";
const PREFIX = "ptm";

export interface LanHost {
  readonly namespace: string;
  /** The host's end of its veth pair. */
  readonly iface: string;
  readonly ipv4: string;
  readonly ipv6: string;
  readonly mac: string;
}

export interface LanOptions {
  nodes: number;
}

/** Runs `ip` (or any command) and returns stdout; failures say which command failed and why. */
export async function sh(command: string, args: string[], timeoutMs = 30_000): Promise<string> {
  try {
    const { stdout } = await run(command, args, { timeout: timeoutMs, maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${(e.stderr ?? "").trim() || e.message}`);
  }
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

const DEBIAN_PACKAGES: Record<string, string> = { arping: "arping", ndisc6: "ndisc6", setpriv: "util-linux" };

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
    if (!alive) await sh(IP, ["netns", "del", name]).catch(() => undefined);
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
  private readonly servers: Server[] = [];
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
    // No multicast snooping: the bridge floods Neighbor Solicitations like an unmanaged switch.
    await sh(IP, ["-n", this.lanNamespace, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"]);
    await sh(IP, ["-n", this.lanNamespace, "link", "set", "br0", "up"]);
    this.client = await this.addHost("client", "c", 2);
    for (let i = 0; i < options.nodes; i++) this.nodes.push(await this.addHost(`n${i}`, `n${i}`, 11 + i));
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
    await sh(IP, [
      "-n",
      n,
      "link",
      "add",
      bridgeSide,
      "type",
      "veth",
      "peer",
      "name",
      iface,
      "netns",
      namespace,
    ]);
    await sh(IP, ["-n", n, "link", "set", bridgeSide, "master", "br0", "up"]);
    const ipv4 = `192.0.2.${hostNumber}`;
    const ipv6 = `2001:db8::${hostNumber.toString(16)}`;
    await sh(IP, ["-n", namespace, "addr", "add", `${ipv4}/24`, "dev", iface]);
    await sh(IP, ["-n", namespace, "addr", "add", `${ipv6}/64`, "dev", iface, "nodad"]);
    await sh(IP, ["-n", namespace, "link", "set", iface, "up"]);
    const link = JSON.parse(await sh(IP, ["-j", "-n", namespace, "link", "show", iface])) as {
      address: string;
    }[];
    return { namespace, iface, ipv4, ipv6, mac: link[0]!.address };
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
    const proc = new LanProcess(
      name,
      join(this.logDir, `${name}.log`),
      host.namespace,
      command,
      args,
      options,
    );
    this.processes.push(proc);
    return proc;
  }

  /**
   * Makes the kube-apiserver, which listens on 127.0.0.1 of the root namespace, reachable at the same
   * address and port inside `host`: a forwarder in the host's namespace listens there and tunnels each
   * connection through a Unix socket (file-system sockets cross namespaces) to this process, which
   * connects to the real apiserver. TLS runs end to end, so the kubeconfig works unchanged.
   */
  async forwardApiserver(host: LanHost, port: number): Promise<void> {
    const socketPath = join(this.logDir, `api-${port}.sock`);
    if (!existsSync(socketPath)) {
      const server = createServer((client) => {
        const upstream = connect(port, "127.0.0.1");
        client.pipe(upstream).pipe(client);
        client.on("error", () => upstream.destroy());
        upstream.on("error", () => client.destroy());
      });
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(socketPath, resolve));
      this.servers.push(server);
    }
    let listening!: () => void;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    const proc = this.start(
      host,
      `apiforward-${host.namespace}`,
      process.execPath,
      ["-e", FORWARDER, String(port), socketPath],
      { onLine: (line) => line === "listening" && listening() },
    );
    await Promise.race([
      ready,
      proc.exited.then((code) => Promise.reject(new Error(`forwarder exited (${code}): ${proc.tail()}`))),
    ]);
  }

  /** Stops every process (SIGKILL), then removes the namespaces and with them every veth. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(this.processes.map((p) => p.kill()));
    for (const server of this.servers) server.close();
    for (const namespace of this.namespaces.reverse())
      await sh(IP, ["netns", "del", namespace]).catch(() => undefined);
    if (process.env.PORTICO_KEEP_RUN !== "1") rmSync(this.logDir, { recursive: true, force: true });
  }
}

const FORWARDER = `
const net = require("node:net");
const [port, path] = process.argv.slice(1);
net.createServer((c) => {
  const u = net.connect(path);
  c.pipe(u).pipe(c);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
}).listen(Number(port), "127.0.0.1", () => console.log("listening"));`;

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

// ---- Clients and servers inside the LAN ----

/** Like sh(), but a non-zero exit still returns what was printed (arping exits 1 when unanswered). */
async function output(command: string, args: string[], timeoutMs: number): Promise<string> {
  try {
    return (await run(command, args, { timeout: timeoutMs })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? "";
  }
}

export interface NeighbourAnswers {
  /** Requests sent. */
  readonly sent: number;
  /** The link-layer address of every answer, in arrival order (one per answer, duplicates included). */
  readonly macs: readonly string[];
}

/** `arping -c count` from `from`: every ARP reply for `address`, to see who answers and how often. */
export async function arping(from: LanHost, address: string, count = 3): Promise<NeighbourAnswers> {
  const text = await output(
    IP,
    [
      "netns",
      "exec",
      from.namespace,
      "arping",
      "-c",
      String(count),
      "-W",
      "0.2",
      "-w",
      "5",
      "-i",
      from.iface,
      address,
    ],
    15_000,
  );
  const macs = [...text.matchAll(/bytes from ([0-9a-f:]{17}) \(/g)].map((m) => m[1]!);
  const sent = Number(/(\d+) packets transmitted/.exec(text)?.[1] ?? count);
  return { sent, macs };
}

/** `ndisc6 -m`: every Neighbor Advertisement answering one solicitation for `address`. */
export async function ndisc(from: LanHost, address: string): Promise<NeighbourAnswers> {
  const text = await output(
    IP,
    ["netns", "exec", from.namespace, "ndisc6", "-m", "-n", "-r", "1", "-w", "1000", address, from.iface],
    15_000,
  );
  const macs = [...text.matchAll(/Target link-layer address: ([0-9A-Fa-f:]{17})/g)].map((m) =>
    m[1]!.toLowerCase(),
  );
  return { sent: 1, macs };
}

/** The host's neighbour-table entry for `address`, as the kernel resolved it, or undefined. */
export async function neighbourMac(host: LanHost, address: string): Promise<string | undefined> {
  const entries = JSON.parse(await sh(IP, ["-j", "-n", host.namespace, "neigh", "show", "to", address])) as {
    lladdr?: string;
    state?: string[];
  }[];
  return entries.find((e) => e.lladdr && !e.state?.includes("FAILED"))?.lladdr;
}

/**
 * A stand-in for kube-proxy and a Service's pods on a node: each TCP connection to `port` on any local
 * address gets `text` and is closed. Resolves once it listens.
 */
export async function startResponder(
  lan: TestLan,
  host: LanHost,
  port: number,
  text: string,
): Promise<LanProcess> {
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = lan.start(
    host,
    `responder-${host.namespace}`,
    process.execPath,
    ["-e", RESPONDER, String(port), text],
    {
      onLine: (line) => line === "listening" && listening(),
    },
  );
  await Promise.race([
    ready,
    proc.exited.then((code) => Promise.reject(new Error(`responder exited (${code})`))),
  ]);
  return proc;
}

const RESPONDER = `
const [port, text] = process.argv.slice(1);
require("node:net").createServer((s) => { s.on("error", () => {}); s.end(text); })
  .listen({ port: Number(port), host: "::", ipv6Only: false }, () => console.log("listening"));`;

export interface ProbeResult {
  readonly target: string;
  /** When the connection attempt began and ended (ms since the epoch). */
  readonly start: number;
  readonly end: number;
  /** What the server said (its node name), or the error. */
  readonly answer?: string;
  readonly error?: string;
}

/**
 * A client that connects to each target every `intervalMs` (timeout 300 ms) and records who answered: the
 * kernel's own ARP/ND resolution and TCP, exactly as any client on the LAN would reach the address.
 */
export class TcpProber {
  readonly results: ProbeResult[] = [];
  readonly process: LanProcess;

  constructor(lan: TestLan, host: LanHost, targets: { address: string; port: number }[], intervalMs = 50) {
    const args = ["-e", PROBER, String(intervalMs), ...targets.map((t) => `${t.address},${t.port}`)];
    this.process = lan.start(host, `prober-${host.namespace}`, process.execPath, args, {
      onLine: (line) => {
        try {
          this.results.push(JSON.parse(line) as ProbeResult);
        } catch {
          // not a result line
        }
      },
    });
  }

  /** The most recent successful answer from `target` that began at or after `since`. */
  lastAnswer(target: string, since = 0): ProbeResult | undefined {
    return this.results.findLast((r) => r.target === target && r.answer !== undefined && r.start >= since);
  }

  stop(): Promise<void> {
    return this.process.kill();
  }
}

const PROBER = `
const net = require("node:net");
const [interval, ...targets] = process.argv.slice(1);
function probe(target) {
  const i = target.lastIndexOf(",");
  const start = Date.now();
  let data = "", done = false;
  const finish = (r) => { if (done) return; done = true; console.log(JSON.stringify({ target: target.slice(0, i), start, end: Date.now(), ...r })); };
  const s = net.connect({ host: target.slice(0, i), port: Number(target.slice(i + 1)), timeout: 300 });
  s.on("data", (d) => (data += d));
  s.on("end", () => finish({ answer: data }));
  s.on("timeout", () => { s.destroy(); finish({ error: "timeout" }); });
  s.on("error", (e) => finish({ error: e.code || e.message }));
}
setInterval(() => targets.forEach(probe), Number(interval));`;

export interface FailoverMeasurement {
  readonly target: string;
  readonly from: string;
  readonly to: string;
  /** From the start of `act` until the first answer from another node. */
  readonly elapsedMs: number;
  /** Probes that failed (timed out or were refused) meanwhile. */
  readonly failedProbes: number;
}

/**
 * Measures how long clients take to reach `target` through another node after `act` (e.g. killing the
 * announcing speaker): the time until the prober first gets an answer from a node other than the one
 * that answered before. Reusable by benchmarks; it asserts nothing about the duration.
 */
export async function measureFailover(
  prober: TcpProber,
  target: string,
  act: () => Promise<void>,
  timeoutMs = 30_000,
): Promise<FailoverMeasurement> {
  const before = prober.lastAnswer(target);
  if (!before?.answer) throw new Error(`no answer from ${target} before the failover`);
  const start = Date.now();
  await act();
  const deadline = start + timeoutMs;
  for (;;) {
    const after = prober.results.find(
      (r) => r.target === target && r.start >= start && r.answer !== undefined && r.answer !== before.answer,
    );
    if (after) {
      const failedProbes = prober.results.filter(
        (r) => r.target === target && r.start >= start && r.end <= after.end && r.error,
      ).length;
      return { target, from: before.answer, to: after.answer!, elapsedMs: after.end - start, failedProbes };
    }
    if (Date.now() > deadline) {
      throw new Error(
        `no node other than ${before.answer} answered ${target} within ${timeoutMs / 1000}s; last: ${JSON.stringify(prober.results.at(-1))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
