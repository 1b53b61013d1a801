// The cloud's DNS for its load balancers' names: dnsmasq in the edge, answering from a hosts file the edge rewrites
// as load balancers come and go (re-read on SIGHUP), on the edge's addresses. The client namespaces are pointed at
// it the way `ip netns exec` lets a namespace have its own resolver (/etc/netns/<name>/resolv.conf, which it
// mounts over /etc/resolv.conf for the command it runs); nothing of the machine's own resolver changes, and the
// file goes with the edge (or, after a killed run, with its namespace: netns.ts sweeps both).
import { mkdir, rm, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LanProcess } from "../netns.ts";
import type { EdgeHost } from "./edgeHost.ts";

/** Where `ip netns exec` looks for a namespace's own resolver configuration. */
export const NETNS_ETC = "/etc/netns";

export class EdgeDns {
  private readonly hostsFile: string;
  private hosts = "";
  private proc: LanProcess | undefined;
  private readonly clients: readonly string[];

  private readonly edge: EdgeHost;
  private readonly dir: string;

  /** `clients`: the namespaces whose lookups go to the edge. */
  constructor(edge: EdgeHost, dir: string, clients: readonly string[]) {
    this.edge = edge;
    this.dir = dir;
    this.clients = clients;
    this.hostsFile = join(dir, "dns-hosts");
  }

  async start(): Promise<void> {
    await writeFile(this.hostsFile, "");
    this.proc = this.edge.start("dns", join(this.dir, "dns.log"), "dnsmasq", [
      "--keep-in-foreground",
      "--log-facility=-",
      "--user=root",
      "--pid-file=",
      "--no-resolv",
      "--no-hosts",
      `--addn-hosts=${this.hostsFile}`,
      "--bind-interfaces",
      `--listen-address=${this.edge.site.address},${this.edge.site.internet.edge}`,
      // Answers change within a pass; a client asks again rather than keep an old one.
      "--local-ttl=1",
    ]);
    for (const ns of this.clients) {
      const dir = join(NETNS_ETC, ns);
      await mkdir(dir, { recursive: true });
      const server =
        ns === this.edge.internetNamespace ? this.edge.site.internet.edge : this.edge.site.address;
      await writeFile(join(dir, "resolv.conf"), `nameserver ${server}\noptions timeout:1 attempts:2\n`);
    }
  }

  /** The names and their addresses from now on. */
  async set(records: ReadonlyMap<string, readonly string[]>): Promise<void> {
    const hosts = [...records]
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([name, addresses]) => addresses.map((a) => `${a} ${name}`))
      .join("\n");
    if (hosts === this.hosts || !this.proc?.pid) return;
    await writeFile(this.hostsFile, hosts ? `${hosts}\n` : "");
    process.kill(this.proc.pid, "SIGHUP");
    this.hosts = hosts;
  }

  async stop(): Promise<void> {
    for (const ns of this.clients) await rm(join(NETNS_ETC, ns), { recursive: true, force: true });
    // /etc/netns itself, when nothing else is in it (made by this run, or left empty by another's).
    await rmdir(NETNS_ETC).catch(() => undefined);
  }
}
