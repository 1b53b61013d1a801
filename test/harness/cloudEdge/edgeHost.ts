// The emulated cloud edge's host: a network namespace on the test LAN, between the LAN's clients and the
// cluster's nodes, where the emulated load balancers' addresses live and the kernel forwards their traffic. It
// routes to the pods' networks through their nodes (as a VPC routes to pod addresses), forwards with iptables in
// its own namespace only, and goes with its namespace: named after this process, a run that was killed is swept by
// the next one like every LAN namespace (netns.ts).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { IP, LanProcess, sh, vethPair } from "../netns.ts";

import type { EdgeSite } from "./addresses.ts";

export { NLB_ADDRESSES } from "./addresses.ts";

export interface EdgeHostOptions {
  /** Its addresses (addresses.ts EDGE_SITES). */
  site: EdgeSite;
  /** The LAN's namespace, whose bridge br0 the edge plugs into. */
  lanNamespace: string;
  /** Routes to the pods' networks: each node's pod CIDR through its address. */
  podRoutes: readonly { cidr: string; via: string }[];
  /** The nodes' namespaces, given a route to the internet client through the edge (taken away with it). */
  nodeNamespaces: readonly string[];
}

export class EdgeHost {
  readonly namespace: string;
  readonly iface: string;
  readonly site: EdgeSite;
  /** The internet client's namespace: behind the edge, at site.internet.client. */
  readonly internetNamespace: string;
  private readonly processes: LanProcess[] = [];
  /** The addresses added and announced, so that a pass re-adding one does not announce it again. */
  private readonly held = new Set<string>();

  private readonly lanNamespace: string;
  private nodeNamespaces: readonly string[] = [];

  private constructor(lanNamespace: string, tag: string, site: EdgeSite) {
    this.site = site;
    this.lanNamespace = lanNamespace;
    this.namespace = `ptm-${process.pid}-${tag}-edge`;
    this.internetNamespace = `ptm-${process.pid}-${tag}-inet`;
    this.iface = `e${tag}edge`;
  }

  /** Plugs a new edge into the LAN whose bridge is `br0` in `lanNamespace`, with routes to the pods' networks. */
  static async create(opts: EdgeHostOptions): Promise<EdgeHost> {
    const edge = new EdgeHost(opts.lanNamespace, randomBytes(2).toString("hex"), opts.site);
    edge.nodeNamespaces = opts.nodeNamespaces;
    try {
      await edge.build(opts.podRoutes);
      await edge.buildInternet();
    } catch (err) {
      await edge.destroy();
      throw err;
    }
    return edge;
  }

  private async build(podRoutes: readonly { cidr: string; via: string }[]): Promise<void> {
    const ns = this.namespace;
    await sh(IP, ["netns", "add", ns]);
    await sh(IP, ["-n", ns, "link", "set", "lo", "up"]);
    const port = `b${this.iface.slice(1, 5)}edge`;
    await vethPair(this.lanNamespace, port, this.iface, ns);
    await sh(IP, ["-n", this.lanNamespace, "link", "set", port, "master", "br0", "up"]);
    await sh(IP, ["-n", ns, "addr", "add", `${this.site.address}/24`, "dev", this.iface]);
    await sh(IP, ["-n", ns, "link", "set", this.iface, "up"]);
    // The namespace's own forwarding switch (a fresh namespace starts with it off); the machine's is untouched.
    await this.exec("sysctl", ["-q", "-w", "net.ipv4.ip_forward=1"]);
    for (const route of podRoutes) await sh(IP, ["-n", ns, "route", "replace", route.cidr, "via", route.via]);
    // The nodes may hold the MAC of an earlier edge for this address: announced, as for the NLBs' addresses.
    await this.announce(this.site.address);
  }

  /**
   * The internet client: a namespace on a link of its own behind the edge, whose flows reach the load balancers
   * with its own address; the nodes (and so the pods) answer it through the edge, which undoes what it translated.
   */
  private async buildInternet(): Promise<void> {
    const inet = this.internetNamespace;
    const near = `i${this.iface.slice(1, 5)}edge`;
    await sh(IP, ["netns", "add", inet]);
    await sh(IP, ["-n", inet, "link", "set", "lo", "up"]);
    await vethPair(this.namespace, near, "eth0", inet);
    const internet = this.site.internet;
    const prefix = internet.cidr.split("/")[1];
    await sh(IP, ["-n", this.namespace, "addr", "add", `${internet.edge}/${prefix}`, "dev", near]);
    await sh(IP, ["-n", this.namespace, "link", "set", near, "up"]);
    await sh(IP, ["-n", inet, "addr", "add", `${internet.client}/${prefix}`, "dev", "eth0"]);
    await sh(IP, ["-n", inet, "link", "set", "eth0", "up"]);
    await sh(IP, ["-n", inet, "route", "add", "default", "via", internet.edge]);
    for (const node of this.nodeNamespaces)
      await sh(IP, ["-n", node, "route", "replace", internet.cidr, "via", this.site.address]);
  }

  /** Runs a command in the edge, with `input` on its standard input; resolves to its output. */
  exec(command: string, args: string[], input?: string): Promise<string> {
    if (input === undefined) return sh(IP, ["netns", "exec", this.namespace, command, ...args]);
    return new Promise((resolve, reject) => {
      const child = spawn(IP, ["netns", "exec", this.namespace, command, ...args], { stdio: "pipe" });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.once("error", reject);
      child.once("close", (code) =>
        code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(" ")} failed: ${err.trim()}`)),
      );
      child.stdin.end(input);
    });
  }

  /** An address the edge answers for (ARP on the LAN included). */
  async addAddress(address: string): Promise<void> {
    await sh(IP, ["-n", this.namespace, "addr", "replace", `${address}/32`, "dev", this.iface]);
    if (this.held.has(address)) return;
    this.held.add(address);
    await this.announce(address);
  }

  /**
   * Announces an address taken anew (gratuitous ARP, as a cloud's edge or a speaker does), so a LAN host that
   * still maps it to the MAC of an edge that held it before (an earlier test's) moves over at once rather than
   * after its neighbour entry goes stale. Best effort: a lost announcement only delays the move.
   */
  private async announce(address: string): Promise<void> {
    await this.exec("arping", ["-q", "-U", "-c", "1", "-i", this.iface, "-S", address, address]).catch(
      () => undefined,
    );
  }

  async removeAddress(address: string): Promise<void> {
    this.held.delete(address);
    await sh(IP, ["-n", this.namespace, "addr", "del", `${address}/32`, "dev", this.iface]).catch(() => "");
  }

  start(name: string, logFile: string, command: string, args: string[]): LanProcess {
    const proc = new LanProcess(name, logFile, this.namespace, command, args, {});
    this.processes.push(proc);
    return proc;
  }

  async destroy(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.kill()));
    for (const node of this.nodeNamespaces)
      await sh(IP, ["-n", node, "route", "del", this.site.internet.cidr, "via", this.site.address]).catch(
        () => undefined,
      );
    await sh(IP, ["netns", "del", this.internetNamespace]).catch(() => undefined);
    await sh(IP, ["netns", "del", this.namespace]).catch(() => undefined);
  }
}
