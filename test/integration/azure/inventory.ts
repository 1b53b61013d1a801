// Reads back everything in the Azure emulator with the real client, so tests assert on ARM itself, not on
// Portico's memory.
import { AZURE_WORLD, type TestAzure } from "../../harness/index.ts";

const last = (id: string | undefined) => id?.split("/").pop();

export async function inventory(azure: TestAzure) {
  const rg = azure.resourceGroup;
  const loadBalancers = [];
  for await (const lb of azure.network.loadBalancers.list(rg)) {
    loadBalancers.push({
      name: lb.name!,
      sku: lb.sku?.name,
      tags: lb.tags ?? {},
      frontends: (lb.frontendIPConfigurations ?? []).map((f) => ({
        name: f.name!,
        publicIp: last(f.publicIPAddress?.id),
        subnet: last(f.subnet?.id),
        privateIp: f.privateIPAddress,
        allocation: f.privateIPAllocationMethod,
      })),
      pools: (lb.backendAddressPools ?? []).map((p) => ({
        name: p.name!,
        addresses: (p.loadBalancerBackendAddresses ?? [])
          .map((a) => `${a.ipAddress}${a.adminState === "Down" ? " (draining)" : ""}`)
          .sort(),
      })),
      probes: (lb.probes ?? []).map((p) => ({
        name: p.name!,
        protocol: p.protocol,
        port: p.port,
        ...(p.requestPath ? { path: p.requestPath } : {}),
      })),
      rules: (lb.loadBalancingRules ?? []).map((r) => ({
        name: r.name!,
        protocol: r.protocol,
        frontendPort: r.frontendPort,
        backendPort: r.backendPort,
        frontend: last(r.frontendIPConfiguration?.id),
        pool: last(r.backendAddressPool?.id),
        probe: last(r.probe?.id),
        floatingIP: r.enableFloatingIP ?? false,
        tcpReset: r.enableTcpReset ?? false,
      })),
    });
  }
  const publicIps = [];
  for await (const p of azure.network.publicIPAddresses.list(rg))
    publicIps.push({
      name: p.name!,
      address: p.ipAddress,
      tags: p.tags ?? {},
      usedBy: last(p.ipConfiguration?.id),
      fqdn: p.dnsSettings?.fqdn,
      ipTags: (p.ipTags ?? []).map((t) => `${t.ipTagType}=${t.tag}`),
    });
  const nsg = await azure.network.networkSecurityGroups.get(rg, "cluster-nsg");
  const securityRules = (nsg.securityRules ?? []).map((r) => ({
    name: r.name!,
    description: r.description,
    access: r.access,
    protocol: r.protocol,
    priority: r.priority!,
    port: r.destinationPortRange,
    sources: r.sourceAddressPrefixes?.length ? [...r.sourceAddressPrefixes].sort() : [r.sourceAddressPrefix],
    destinations: r.destinationAddressPrefixes?.length
      ? [...r.destinationAddressPrefixes].sort()
      : [r.destinationAddressPrefix],
  }));
  return { loadBalancers, publicIps, securityRules };
}

export type Inventory = Awaited<ReturnType<typeof inventory>>;

/** One Service as the cluster holds it, and what Portico must have made for it. */
export interface ServiceWant {
  name: string;
  uid: string;
  internal: boolean;
  ports: { protocol: "TCP" | "UDP"; port: number; nodePort: number }[];
  /** The address in the Service's status. */
  ip: string | undefined;
}

/**
 * Every way the inventory differs from exactly what the live Services ask for on the cluster's shared load
 * balancers — a missing, extra or duplicated load balancer, frontend, rule, probe, public IP or security rule,
 * anything left of the Services in `gone`, a status address that is not the frontend's — one line each; empty
 * when it is exact.
 */
export function inventoryProblems(
  inv: Inventory,
  cluster: string,
  live: ServiceWant[],
  gone: { name: string; uid: string }[],
  nodeIPs: string[],
): string[] {
  const problems: string[] = [];
  const fe = (uid: string) => `a${uid.replace(/-/g, "")}`;
  const same = (what: string, got: string[], want: string[]) => {
    const g = [...got].sort();
    const w = [...want].sort();
    const extra = g.filter((x, i) => g.indexOf(x) !== i || !w.includes(x));
    const missing = w.filter((x) => !g.includes(x));
    if (extra.length || missing.length)
      problems.push(`${what}: extra or duplicate [${extra.join(" ")}], missing [${missing.join(" ")}]`);
  };
  const ruleNames = (s: ServiceWant) => s.ports.map((p) => `${fe(s.uid)}-${p.protocol}-${p.port}`);
  const groups = new Map<string, ServiceWant[]>();
  for (const s of live) {
    const lb = s.internal ? `${cluster}-internal` : cluster;
    groups.set(lb, [...(groups.get(lb) ?? []), s]);
  }
  same(
    "load balancers",
    inv.loadBalancers.map((lb) => lb.name),
    [...groups.keys()],
  );
  for (const lb of inv.loadBalancers) {
    const on = groups.get(lb.name) ?? [];
    same(
      `${lb.name} frontends`,
      lb.frontends.map((f) => f.name),
      on.map((s) => fe(s.uid)),
    );
    same(
      `${lb.name} rules`,
      lb.rules.map((r) => r.name),
      on.flatMap(ruleNames),
    );
    same(
      `${lb.name} probes`,
      lb.probes.map((p) => p.name),
      on.flatMap(ruleNames),
    );
    same(
      `${lb.name} pools`,
      lb.pools.map((p) => `${p.name}=${p.addresses.join(",")}`),
      on.length ? [`portico-nodes=${[...nodeIPs].sort().join(",")}`] : [],
    );
    same(
      `${lb.name} frontend record tags`,
      Object.keys(lb.tags).filter((k) => k.startsWith("portico.io-frontend-")),
      on.filter((s) => s.internal).map((s) => `portico.io-frontend-${fe(s.uid)}`),
    );
    for (const s of on)
      for (const p of s.ports) {
        const name = `${fe(s.uid)}-${p.protocol}-${p.port}`;
        const rule = lb.rules.find((r) => r.name === name);
        if (rule && (rule.frontend !== fe(s.uid) || rule.backendPort !== p.nodePort || rule.probe !== name))
          problems.push(`${s.name}: rule ${name} is ${JSON.stringify(rule)}`);
      }
    for (const s of on) {
      const f = lb.frontends.find((x) => x.name === fe(s.uid));
      const address = s.internal ? f?.privateIp : inv.publicIps.find((p) => p.name === f?.publicIp)?.address;
      if (f && (!address || address !== s.ip))
        problems.push(`${s.name}: status address ${s.ip}, frontend address ${address}`);
    }
  }
  const ours = inv.publicIps.filter((p) => p.tags["portico.io-cluster"] === cluster);
  same(
    "Portico's public IPs, by the Service UID they are tagged with",
    ours.map((p) => p.tags["portico.io-service-uid"] ?? `untagged ${p.name}`),
    live.filter((s) => !s.internal).map((s) => s.uid),
  );
  for (const p of ours) {
    const s = live.find((x) => x.uid === p.tags["portico.io-service-uid"]);
    if (s && (!p.name.endsWith(`-${fe(s.uid)}`) || p.usedBy !== fe(s.uid)))
      problems.push(`${s.name}: public IP ${p.name} used by ${p.usedBy}`);
  }
  same(
    "security rules",
    inv.securityRules.map((r) => r.name),
    live.flatMap(ruleNames),
  );
  for (const r of inv.securityRules) {
    const s = live.find((x) => r.name.startsWith(fe(x.uid)));
    const port = s?.ports.find((p) => r.name === `${fe(s.uid)}-${p.protocol}-${p.port}`);
    if (
      s &&
      port &&
      (r.port !== String(port.nodePort) ||
        !r.description?.endsWith(`/${s.name}`) ||
        // Allow rules name the subnet holding the nodes, not each node.
        r.destinations.join(",") !== AZURE_WORLD.subnetPrefix ||
        r.sources.join(",") !== (s.internal ? "VirtualNetwork" : "Internet"))
    )
      problems.push(`${s.name}: security rule ${JSON.stringify(r)}`);
  }
  const addresses = live.map((s) => s.ip).filter(Boolean);
  if (new Set(addresses).size !== live.length)
    problems.push(`status addresses not one each and distinct: ${addresses.join(" ")}`);
  const leftovers = JSON.stringify(inv);
  for (const g of gone)
    if (leftovers.includes(fe(g.uid))) problems.push(`something of deleted ${g.name} is left`);
  return problems;
}
