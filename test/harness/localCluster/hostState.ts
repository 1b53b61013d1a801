// What the local cluster must leave alone on the machine it runs on, read from the root namespace: the
// sysctls kubelet, kube-proxy and the CNI plugins would set machine-wide (or in the root namespace), the
// network interfaces and routes, and the packet filter's rules. Taken before the cluster starts and compared
// while it runs and after it stops.
import { readFile } from "node:fs/promises";
import { IP, sh } from "../netns.ts";

const SYSCTLS = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
  "net/ipv4/ip_forward",
  "net/ipv4/conf/all/route_localnet",
  "net/netfilter/nf_conntrack_max",
  "net/bridge/bridge-nf-call-iptables",
];

export type HostState = Record<string, string>;

export async function hostState(): Promise<HostState> {
  const state: HostState = {};
  for (const key of SYSCTLS)
    state[`sysctl ${key.replace(/\//g, ".")}`] = (
      await readFile(`/proc/sys/${key}`, "utf8").catch(() => "absent")
    ).trim();
  const links = JSON.parse(await sh(IP, ["-j", "link", "show"])) as { ifname: string }[];
  state.links = links
    .map((l) => l.ifname)
    .sort()
    .join(" ");
  state.routes = (await sh(IP, ["route", "show", "table", "all"])).trim();
  for (const tool of ["iptables-save", "ip6tables-save"])
    state[tool] = (await sh(tool, []).catch((err: Error) => `unreadable: ${err.message}`))
      .split("\n")
      // Generation times and packet counters change on their own.
      .filter((line) => !line.startsWith("#"))
      .map((line) => line.replace(/\[\d+:\d+\]/g, ""))
      .join("\n")
      .trim();
  return state;
}

/** The entries that differ, as "key: before -> now". */
export function hostChanges(before: HostState, now: HostState): string[] {
  return Object.keys({ ...before, ...now })
    .filter((key) => before[key] !== now[key])
    .map((key) => `${key}: ${JSON.stringify(before[key])} -> ${JSON.stringify(now[key])}`);
}
