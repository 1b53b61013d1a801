// One worker node of the local cluster: containerd with runc and the CNI plugins, kubelet and kube-proxy,
// all inside the node's namespaces and cgroup (node.sh). The node can be stopped as a machine fails (every
// process killed at once) and started again on the same state, as a machine reboots.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createCgroup, destroyCgroup } from "./cgroups.ts";
import {
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  paths,
  podMasquerade,
  type NodeLayout,
} from "./nodeConfig.ts";
import { IP, setCable, sh, type LanHost } from "../netns.ts";
import { ManagedProcess } from "../processes.ts";

const NODE_SH = join(import.meta.dirname, "node.sh");
const SETPRIV = "/usr/bin/setpriv";

export interface NodeBinaries {
  kubelet: string;
  kubeProxy: string;
}

export interface NodeCredentials {
  /** system:node:<name> in system:nodes, for kubelet. */
  kubeletKubeconfig: string;
  /** system:kube-proxy, shared by every node's kube-proxy. */
  kubeProxyKubeconfig: string;
  caFile: string;
}

/** Image archives to load into the node's containerd before kubelet starts. */
export interface ImageArchive {
  ref: string;
  archive: string;
}

/** All it takes to handle a node from another process (a test worker): plain data. */
export interface NodeDescription {
  layout: NodeLayout;
  /** The node's namespace and interface on the LAN. */
  host: LanHost;
  binaries: NodeBinaries;
  credentials: NodeCredentials;
}

export class WorkerNode {
  readonly layout: NodeLayout;
  readonly host: LanHost;
  private holder: ChildProcess | undefined;
  private daemons: ManagedProcess[] = [];
  private readonly binaries: NodeBinaries;
  private readonly credentials: NodeCredentials;

  constructor(description: NodeDescription) {
    ({ layout: this.layout, host: this.host } = description);
    ({ binaries: this.binaries, credentials: this.credentials } = description);
  }

  describe(): NodeDescription {
    const { layout, host, binaries, credentials } = this;
    return { layout, host, binaries, credentials };
  }

  get netns(): string {
    return this.host.namespace;
  }

  get name(): string {
    return this.layout.name;
  }

  get running(): boolean {
    return this.holder !== undefined;
  }

  /** Writes the node's configuration and starts containerd, loads `images`, then kubelet and kube-proxy. */
  async start(images: ImageArchive[]): Promise<void> {
    const { dir } = this.layout;
    const p = paths(this.layout);
    await mkdir(p.cniConfDir, { recursive: true });
    await writeFile(p.containerdConfig, containerdConfig(this.layout));
    await writeFile(join(p.cniConfDir, "10-portico.conflist"), cniConfig(this.layout));
    await writeFile(p.kubeletConfig, kubeletConfig(this.layout, this.credentials.caFile));
    await writeFile(p.kubeProxyConfig, kubeProxyConfig(this.layout, this.credentials.kubeProxyKubeconfig));
    await createCgroup(this.layout.cgroup);
    await this.startHolder();
    const containerd = this.daemon("containerd", ["containerd", "--config", p.containerdConfig]);
    await containerd.waitReady(
      async () => existsSync(p.containerdSocket) && (await this.ctr(["version"]), true),
      30_000,
    );
    for (const image of images) await this.ctr(["images", "import", image.archive], 300_000);
    // Before any pod starts; a node powered on again finds its packet filter flushed (powerOn).
    const iptables = (...args: string[]) =>
      sh(IP, ["netns", "exec", this.netns, "iptables", "-t", "nat", ...args]);
    await iptables("-C", ...podMasquerade(this.layout)).catch(() =>
      iptables("-A", ...podMasquerade(this.layout)),
    );
    // kubelet asks containerd's CRI once as it starts and exits when the CRI is not serving yet: after a
    // power loss containerd first cleans up after every container's dead shim (the speaker's pod alone has
    // four), and its socket answers before its CRI does. systemd starts kubelet again when it exits; so
    // does this, a few times.
    for (let attempt = 1; ; attempt++) {
      const kubelet = this.daemon("kubelet", [
        this.binaries.kubelet,
        `--config=${p.kubeletConfig}`,
        `--kubeconfig=${this.credentials.kubeletKubeconfig}`,
        `--hostname-override=${this.layout.name}`,
        `--node-ip=${this.layout.ip}`,
        `--cert-dir=${join(dir, "kubelet-pki")}`,
        "--v=1",
      ]);
      try {
        await kubelet.waitReady(() => this.healthy("http://127.0.0.1:10248/healthz"), 60_000);
        break;
      } catch (err) {
        if (kubelet.running || attempt === 5) throw err;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    const proxy = this.daemon("kube-proxy", [
      this.binaries.kubeProxy,
      `--config=${p.kubeProxyConfig}`,
      "--v=1",
    ]);
    await proxy.waitReady(() => this.healthy(`http://${this.layout.ip}:10256/healthz`, true), 60_000);
  }

  /**
   * A machine losing power: every process killed at once, containers included, and its network gone with
   * its kernel (the cable is pulled at the switch, so nothing the namespace still holds answers).
   */
  async powerOff(): Promise<void> {
    // The network first: killing every process takes a moment, during which the kernel would still forward.
    await setCable(this.host, false);
    await this.stop();
  }

  /**
   * The machine booting again on the same disks: a fresh kernel's packet filter and connection table, the
   * cable back in, then containerd, kubelet and kube-proxy (images are already on disk).
   */
  async powerOn(): Promise<void> {
    for (const tool of ["iptables", "ip6tables"])
      for (const table of ["filter", "nat", "mangle", "raw"]) {
        await sh(IP, ["netns", "exec", this.netns, tool, "-t", table, "-F"]);
        await sh(IP, ["netns", "exec", this.netns, tool, "-t", table, "-X"]);
      }
    await sh(IP, ["netns", "exec", this.netns, "conntrack", "-F"]).catch(() => undefined);
    await setCable(this.host, true);
    await this.start([]);
  }

  /** Every process of the node killed at once, containers included. */
  async stop(): Promise<void> {
    await destroyCgroup(this.layout.cgroup);
    await Promise.all(this.daemons.map((d) => d.kill()));
    this.daemons = [];
    this.holder = undefined;
  }

  /** Stops the node and removes its files. */
  async destroy(): Promise<void> {
    await this.stop();
    if (process.env.PORTICO_KEEP_RUN !== "1") await rm(this.layout.dir, { recursive: true, force: true });
  }

  /** Runs `ctr` against the node's containerd, in the k8s.io namespace the CRI uses. */
  ctr(args: string[], timeoutMs = 30_000): Promise<string> {
    return sh("ctr", ["--address", paths(this.layout).containerdSocket, "-n", "k8s.io", ...args], timeoutMs);
  }

  /** Runs a command inside the node (its mount and network namespaces and cgroup) and returns stdout. */
  exec(command: string, args: string[], timeoutMs?: number): Promise<string> {
    return sh(NODE_SH, ["run", this.layout.cgroup, String(this.holder!.pid), command, ...args], timeoutMs);
  }

  private async startHolder(): Promise<void> {
    const log = join(this.layout.dir, "holder.log");
    const holder = spawn(
      SETPRIV,
      ["--pdeathsig", "KILL", "--", NODE_SH, "hold", this.layout.cgroup, this.netns, this.layout.dir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    holder.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: holder.stdout });
      lines.on("line", (line) => line === "ready" && resolve());
      holder.once("exit", (code) =>
        reject(
          new Error(`node ${this.layout.name}: node.sh hold exited (${code}): ${stderr.trim()} (${log})`),
        ),
      );
    });
    this.holder = holder;
  }

  private daemon(name: string, argv: string[]): ManagedProcess {
    const proc = ManagedProcess.start(
      `${this.layout.name}/${name}`,
      NODE_SH,
      ["run", this.layout.cgroup, String(this.holder!.pid), ...argv],
      join(this.layout.dir, `${name}.log`),
    );
    this.daemons.push(proc);
    return proc;
  }

  /** An HTTP health endpoint inside the node answers 200 (`anyStatus`: answers at all). */
  private async healthy(url: string, anyStatus = false): Promise<boolean> {
    const code = await this.exec("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-m",
      "2",
      url,
    ]).catch(() => "000");
    return anyStatus ? code !== "000" : code === "200";
  }
}
