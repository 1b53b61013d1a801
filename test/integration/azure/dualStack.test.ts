// IPv6-only and dual-stack Services: a frontend per IP family on the cluster's load balancer, each with its own
// address, node pool and rules, and an address per family in the Service's status; dropping a family removes that
// family's side and nothing else. The -ipv6 annotations are driven through the provider itself, with the intent the
// controller builds, while the controller's annotation catalog still refuses them.
import type { V1Service } from "@kubernetes/client-node";
import { Address4, Address6 } from "ip-address";
import { publicIpName } from "../../../providers/azure/names.ts";
import { AzureProvider } from "../../../providers/azure/provider.ts";
import type { LoadBalancerIntent } from "../../../providers/provider.ts";
import {
  AZURE_WORLD,
  expect,
  mergePatch,
  test,
  waitFor,
  type TestAzure,
  type TestCluster,
} from "../../harness/index.ts";
import { azureTestConfig } from "../../harness/azure.ts";
import { startPortico } from "../../harness/controller.ts";
import { lbService, patchService } from "./fixtures.ts";
import { inventory } from "./inventory.ts";

const INTERNAL = "service.beta.kubernetes.io/azure-load-balancer-internal";
const feOf = (uid: string, v6 = false) => `a${uid.replace(/-/g, "")}${v6 ? "v6" : ""}`;
const DUAL = { ipFamilies: ["IPv4", "IPv6"], ipFamilyPolicy: "RequireDualStack" } satisfies V1Service["spec"];

/** Dual-stack Nodes, as AKS's kubelets register them: an IPv4 and an IPv6 InternalIP in the node subnet. */
async function dualStackNodes(cluster: TestCluster, azure: TestAzure, count = 2) {
  const nodes: { name: string; ip: string; ip6: string }[] = [];
  for (let i = 0; i < count; i++) {
    const ip = `10.0.1.${10 + i}`;
    const ip6 = `fd00:10:0:1::${10 + i}`;
    const node = await cluster.createNode(`node-${i}`, {
      internalIP: ip,
      providerID: `azure:///subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute/virtualMachines/node-${i}`,
    });
    const name = node.metadata!.name!;
    await cluster.core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            addresses: [
              { type: "InternalIP", address: ip },
              { type: "InternalIP", address: ip6 },
              { type: "Hostname", address: name },
            ],
          },
        },
      },
      mergePatch,
    );
    nodes.push({ name, ip, ip6 });
  }
  return nodes;
}

async function ingressOf(cluster: TestCluster, name: string, count: number): Promise<string[]> {
  return waitFor(`Service ${name} to get ${count} load balancer address(es)`, async () => {
    const ips = (await cluster.getService(name)).status?.loadBalancer?.ingress?.map((i) => i.ip!) ?? [];
    return ips.length === count ? ips : undefined;
  });
}

test("a dual-stack public Service: two public IPs, two frontends, a node pool and rule per family, both addresses in status; back to IPv4 only removes the IPv6 side and nothing else", async ({
  cluster,
  azure,
}) => {
  const nodes = await dualStackNodes(cluster, azure);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService("web", lbService(undefined, DUAL));
  const uid = svc.metadata!.uid!;
  const [fe, fe6] = [feOf(uid), feOf(uid, true)];
  const [pip, pip6] = [publicIpName(cluster.namespace, uid), publicIpName(cluster.namespace, uid, "IPv6")];
  const nodePort = svc.spec!.ports![0]!.nodePort!;
  const [ip4, ip6] = await ingressOf(cluster, "web", 2);
  expect(ip4).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  expect(ip6).toMatch(/^2001:db8:/);

  const inv = await inventory(azure);
  const lb = inv.loadBalancers[0]!;
  expect(inv.loadBalancers).toHaveLength(1);
  expect(lb.frontends.map((f) => [f.name, f.publicIp])).toEqual([
    [fe, pip],
    [fe6, pip6],
  ]);
  expect(inv.publicIps.map((p) => [p.name, p.address, p.usedBy]).sort()).toEqual(
    [
      [pip, ip4, fe],
      [pip6, ip6, fe6],
    ].sort(),
  );
  expect(lb.pools).toEqual([
    { name: "portico-nodes", addresses: nodes.map((n) => n.ip) },
    { name: "portico-nodes-ipv6", addresses: nodes.map((n) => n.ip6) },
  ]);
  expect(lb.rules.map((r) => [r.name, r.frontend, r.pool, r.frontendPort, r.backendPort])).toEqual([
    [`${fe}-TCP-80`, fe, "portico-nodes", 80, nodePort],
    [`${fe6}-TCP-80`, fe6, "portico-nodes-ipv6", 80, nodePort],
  ]);
  // The security group lets each family reach its own backends: the node subnet's range of that family.
  expect(inv.securityRules.map((r) => [r.name, r.destinations]).sort()).toEqual(
    [
      [`${fe}-TCP-80`, [AZURE_WORLD.subnetPrefix]],
      [`${fe6}-TCP-80`, [AZURE_WORLD.subnetPrefixV6]],
    ].sort(),
  );

  // RequireDualStack → SingleStack IPv4: the apiserver drops IPv6 from spec.ipFamilies.
  await patchService(cluster, "web", { spec: { ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv4"] } });
  expect(await ingressOf(cluster, "web", 1)).toEqual([ip4]);
  const after = await waitFor("the IPv6 side to go", async () => {
    const now = await inventory(azure);
    return now.publicIps.length === 1 ? now : undefined;
  });
  const lbAfter = after.loadBalancers[0]!;
  expect(lbAfter.frontends).toEqual(lb.frontends.filter((f) => f.name === fe));
  expect(lbAfter.pools).toEqual(lb.pools.filter((p) => p.name === "portico-nodes"));
  expect(lbAfter.rules).toEqual(lb.rules.filter((r) => r.frontend === fe));
  expect(lbAfter.probes).toEqual(lb.probes.filter((p) => p.name.startsWith(`${fe}-`)));
  expect(after.publicIps).toEqual(inv.publicIps.filter((p) => p.usedBy === fe));
  expect(after.securityRules).toEqual(inv.securityRules.filter((r) => r.name.startsWith(`${fe}-`)));
});

test("an IPv6-only Service: one IPv6 frontend with an IPv6 public IP, the nodes' IPv6 addresses as backends", async ({
  cluster,
  azure,
}) => {
  const nodes = await dualStackNodes(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  const svc = await cluster.createService(
    "v6",
    lbService(undefined, { ipFamilies: ["IPv6"], ipFamilyPolicy: "SingleStack" }),
  );
  const fe6 = feOf(svc.metadata!.uid!, true);
  const [ip6] = await ingressOf(cluster, "v6", 1);
  expect(ip6).toMatch(/^2001:db8:/);
  const inv = await inventory(azure);
  const lb = inv.loadBalancers[0]!;
  expect(lb.frontends.map((f) => f.name)).toEqual([fe6]);
  expect(lb.pools).toEqual([{ name: "portico-nodes-ipv6", addresses: [nodes[0]!.ip6] }]);
  expect(lb.rules.map((r) => [r.frontend, r.pool])).toEqual([[fe6, "portico-nodes-ipv6"]]);
  expect(inv.publicIps.map((p) => [p.name, p.address])).toEqual([
    [publicIpName(cluster.namespace, svc.metadata!.uid!, "IPv6"), ip6],
  ]);

  await cluster.core.deleteNamespacedService({ name: "v6", namespace: cluster.namespace });
  await waitFor("everything of the IPv6-only Service to go", async () => {
    const now = await inventory(azure);
    return now.loadBalancers.length === 0 && now.publicIps.length === 0 && now.securityRules.length === 0
      ? true
      : undefined;
  });
});

test("a dual-stack internal Service (PreferDualStack): a private address of each family from the node subnet", async ({
  cluster,
  azure,
}) => {
  await dualStackNodes(cluster, azure, 1);
  await startPortico(cluster, { provider: "azure" });
  // PreferDualStack without ipFamilies: the dual-stack apiserver gives the Service both families.
  const svc = await cluster.createService(
    "int",
    lbService(undefined, { ipFamilyPolicy: "PreferDualStack" }),
    {
      [INTERNAL]: "true",
    },
  );
  expect(svc.spec!.ipFamilies).toEqual(["IPv4", "IPv6"]);
  const uid = svc.metadata!.uid!;
  const [ip4, ip6] = await ingressOf(cluster, "int", 2);
  expect(ip4).toMatch(/^10\.0\.1\.\d+$/);
  expect(ip6).toMatch(/^fd00:10:0:1::[0-9a-f]+$/);
  const inv = await inventory(azure);
  expect(inv.loadBalancers.map((l) => l.name)).toEqual([`${cluster.namespace}-internal`]);
  expect(inv.loadBalancers[0]!.frontends).toEqual([
    { name: feOf(uid), subnet: "nodes", privateIp: ip4, allocation: "Dynamic", publicIp: undefined },
    { name: feOf(uid, true), subnet: "nodes", privateIp: ip6, allocation: "Dynamic", publicIp: undefined },
  ]);
  expect(inv.publicIps).toEqual([]);
});

/** The intent the controller builds for a dual-stack Service on two dual-stack nodes. */
function dualIntent(svc: V1Service, annotations: Record<string, string>): LoadBalancerIntent {
  return {
    service: { namespace: svc.metadata!.namespace!, name: svc.metadata!.name!, uid: svc.metadata!.uid! },
    loadBalancerClass: svc.spec!.loadBalancerClass!,
    annotations,
    ports: svc.spec!.ports!.map((p) => ({
      name: p.name ?? "",
      protocol: "TCP",
      port: p.port,
      nodePort: p.nodePort!,
    })),
    externalTrafficPolicy: "Cluster",
    allocateNodePorts: true,
    nodes: [{ name: "node-0", internalIP: "10.0.1.10", internalIPv6: "fd00:10:0:1::10" }],
    endpoints: [],
    drainingEndpoints: [],
    sourceRanges: [],
    ipFamilies: ["IPv4", "IPv6"],
    ipFamilyPolicy: "RequireDualStack",
    serviceLabels: {},
    namespaceLabels: {},
  };
}

test("the -ipv6 annotations: the user's IPv6 public IP by name, a static private IPv6 address and an IPv6 prefix, through the provider", async ({
  cluster,
  azure,
}) => {
  const provider = new AzureProvider({ clusterName: cluster.namespace, ...azureTestConfig() });
  const mine = await azure.network.publicIPAddresses.createOrUpdate(
    azure.resourceGroup,
    "my-v6",
    {
      location: AZURE_WORLD.location,
      sku: { name: "Standard", tier: "Regional" },
      publicIPAllocationMethod: "Static",
      publicIPAddressVersion: "IPv6",
    },
    { updateIntervalInMs: 20 },
  );
  // A real Service, for its UID and node port; the controller is not running, the provider is driven directly.
  const pub = await cluster.createService("pub", lbService(undefined, DUAL));
  const result = await provider.ensure(
    dualIntent(pub, { "service.beta.kubernetes.io/azure-pip-name-ipv6": "my-v6" }),
  );
  expect(result.ingress.map((i) => i.ip)).toEqual([expect.stringMatching(/^\d+\./), mine.ipAddress]);
  let inv = await inventory(azure);
  const fe6 = feOf(pub.metadata!.uid!, true);
  expect(inv.loadBalancers[0]!.frontends.find((f) => f.name === fe6)!.publicIp).toBe("my-v6");
  // The user's public IP is used as it is: no Portico tags, and it stays when the Service goes.
  expect(inv.publicIps.find((p) => p.name === "my-v6")!.tags).toEqual({});
  await provider.delete(dualIntent(pub, {}).service);
  inv = await inventory(azure);
  expect(inv.publicIps.map((p) => [p.name, p.usedBy])).toEqual([["my-v6", undefined]]);
  expect(inv.loadBalancers).toEqual([]);

  const int = await cluster.createService("int", lbService(undefined, DUAL));
  const internal = await provider.ensure(
    dualIntent(int, {
      [INTERNAL]: "true",
      "service.beta.kubernetes.io/azure-load-balancer-ipv6": "fd00:10:0:1::99",
    }),
  );
  expect(internal.ingress.map((i) => i.ip)).toEqual([
    expect.stringMatching(/^10\.0\.1\./),
    "fd00:10:0:1::99",
  ]);
  inv = await inventory(azure);
  expect(
    inv.loadBalancers[0]!.frontends.find((f) => f.name === feOf(int.metadata!.uid!, true)),
  ).toMatchObject({
    privateIp: "fd00:10:0:1::99",
    allocation: "Static",
  });
  await provider.delete(dualIntent(int, {}).service);

  // azure-pip-prefix-id-ipv6: Portico's IPv6 public IP is made from the user's IPv6 prefix.
  const prefix = await azure.network.publicIPPrefixes.createOrUpdate(
    azure.resourceGroup,
    "v6-prefix",
    {
      location: AZURE_WORLD.location,
      sku: { name: "Standard", tier: "Regional" },
      prefixLength: 126,
      publicIPAddressVersion: "IPv6",
    },
    { updateIntervalInMs: 20 },
  );
  const fromPrefix = await cluster.createService("prefixed", lbService(undefined, DUAL));
  const prefixed = await provider.ensure(
    dualIntent(fromPrefix, { "service.beta.kubernetes.io/azure-pip-prefix-id-ipv6": prefix.id! }),
  );
  const v6 = prefixed.ingress[1]!.ip!;
  expect(new Address6(v6).isInSubnet(new Address6(prefix.ipPrefix!))).toBe(true);
  // The IPv4 side is not from the prefix.
  expect(new Address4(prefixed.ingress[0]!.ip!).isCorrect()).toBe(true);
  inv = await inventory(azure);
  const made = publicIpName(cluster.namespace, fromPrefix.metadata!.uid!, "IPv6");
  expect(inv.publicIps.find((p) => p.name === made)?.address).toBe(v6);
  await provider.delete(dualIntent(fromPrefix, {}).service);
  inv = await inventory(azure);
  expect(inv.publicIps.map((p) => p.name)).toEqual(["my-v6"]);
});
