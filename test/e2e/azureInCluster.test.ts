// The aks overlay's controller running in the cluster, as on AKS but against Portico's ARM emulator: its
// image, ServiceAccount and RBAC, its azure.json ConfigMap (with the keys this cluster needs given as the
// AZURE_* / PORTICO_AZURE_* variables that override it), and the Azure SDK reaching ARM from a pod with a
// service principal's secret in place of workload identity. A Service of class portico.io/azure-lb gets a
// frontend with a public IP on the shared load balancer, the three nodes in its backend pool, and loses them
// when deleted.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { startAzureEmulator, trustCertificateAuthority } from "../emulators/azure/index.ts";
import { AZURE_WORLD, TestAzure } from "../harness/azure.ts";
import { describe, reachableFromPods, test, waitFor } from "../harness/e2e.ts";
import { installPortico, uninstall } from "../harness/localCluster/install.ts";
import { LAN_GATEWAY } from "../harness/netns.ts";

/** The network the nodes live in, as Azure would hold it: the LAN's subnet, and the pods' range. */
const VNET = { name: "lan-vnet", nodes: "192.0.2.0/24", pods: "10.244.0.0/16" };

describe("the aks overlay in the cluster", () => {
  test("its controller pods give a Service a frontend with a public IP and the nodes as backends, and remove them", async ({
    ns,
  }) => {
    const dir = await mkdtemp(join(tmpdir(), "portico-e2e-azure-"));
    const emulator = await startAzureEmulator({ dir, alsoReachedAt: [LAN_GATEWAY] });
    onTestFinished(async () => {
      await emulator.stop();
      await rm(dir, { recursive: true, force: true });
    });
    const port = Number(new URL(emulator.url).port);
    const forward = await reachableFromPods(ns.context, port, dir);
    onTestFinished(() => forward.stop());
    // This process talks to the emulator at its own address; the pods at the LAN's gateway.
    trustCertificateAuthority(emulator.caCertPath);
    Object.assign(process.env, emulator.environment);
    const azure = await TestAzure.fresh();
    await azure.network.virtualNetworks.beginCreateOrUpdateAndWait(AZURE_WORLD.resourceGroup, VNET.name, {
      location: AZURE_WORLD.location,
      addressSpace: { addressPrefixes: [VNET.nodes, VNET.pods] },
      subnets: [
        { name: "nodes", addressPrefix: VNET.nodes },
        { name: "pods", addressPrefix: VNET.pods },
      ],
    });

    const inCluster = `https://${LAN_GATEWAY}:${port}`;
    const env = {
      ...emulator.environment,
      AZURE_AUTHORITY_HOST: inCluster,
      AZURE_RESOURCE_MANAGER_ENDPOINT: inCluster,
      PORTICO_AZURE_RESOURCE_GROUP: AZURE_WORLD.resourceGroup,
      PORTICO_AZURE_LOCATION: AZURE_WORLD.location,
      PORTICO_AZURE_VNET_NAME: VNET.name,
      PORTICO_AZURE_SUBNET_NAME: "nodes",
      PORTICO_AZURE_SECURITY_GROUP_NAME: AZURE_WORLD.securityGroupName,
      NODE_EXTRA_CA_CERTS: "/etc/emulator-ca/ca.crt",
    };
    const container = "/spec/template/spec/containers/0";
    const patch = [
      ...Object.entries(env).map(([name, value]) => ({
        op: "add",
        path: `${container}/env/-`,
        value: { name, value },
      })),
      {
        op: "add",
        path: "/spec/template/spec/volumes/-",
        value: { name: "emulator-ca", configMap: { name: "emulator-ca" } },
      },
      {
        op: "add",
        path: `${container}/volumeMounts/-`,
        value: { name: "emulator-ca", mountPath: "/etc/emulator-ca", readOnly: true },
      },
    ];
    const objects = await installPortico(ns.context.kubeconfig, {
      overlay: "aks",
      image: ns.context.porticoImage,
      kustomization: {
        namespace: "portico-aks",
        namePrefix: "aks-",
        configMapGenerator: [
          { name: "emulator-ca", literals: [`ca.crt=${await readFile(emulator.caCertPath, "utf8")}`] },
        ],
        patches: [{ target: { kind: "Deployment" }, patch: JSON.stringify(patch) }],
      },
    });
    onTestFinished(() => uninstall(ns.context.kubeconfig, objects));

    await ns.deployEcho("echo", 2);
    await ns.waitAvailable("echo");
    await ns.createLoadBalancer("web", "echo", { loadBalancerClass: "portico.io/azure-lb" });
    const address = await ns.waitForAddress("web", 120_000);

    const nodeIps = ns.context.nodes.map((n) => n.layout.ip).sort();
    const svc = await ns.core.readNamespacedService({ name: "web", namespace: ns.name });
    const nodePort = svc.spec!.ports![0]!.nodePort!;
    await waitFor(
      "a frontend with the Service's public IP, a rule for port 80 and the three nodes as backends",
      async () => {
        const lbs = [];
        for await (const lb of azure.network.loadBalancers.list(AZURE_WORLD.resourceGroup)) lbs.push(lb);
        const ips = [];
        for await (const ip of azure.network.publicIPAddresses.list(AZURE_WORLD.resourceGroup)) ips.push(ip);
        const pip = ips.find((ip) => ip.ipAddress === address);
        const lb = lbs.find((l) =>
          l.frontendIPConfigurations?.some(
            (f) => f.publicIPAddress?.id?.toLowerCase() === pip?.id?.toLowerCase(),
          ),
        );
        const rule = lb?.loadBalancingRules?.find((r) => r.frontendPort === 80);
        const backends = (lb?.backendAddressPools ?? [])
          .flatMap((p) => p.loadBalancerBackendAddresses ?? [])
          .map((a) => a.ipAddress!)
          .sort();
        const seen = {
          pip: pip?.name,
          lb: lb?.name,
          rule: rule && `${rule.frontendPort}->${rule.backendPort}`,
          backends,
        };
        if (
          pip &&
          lb &&
          rule?.backendPort === nodePort &&
          JSON.stringify(backends) === JSON.stringify(nodeIps)
        )
          return true;
        throw new Error(JSON.stringify(seen));
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );

    await ns.core.deleteNamespacedService({ name: "web", namespace: ns.name });
    await waitFor(
      "the Service's public IP to be deleted",
      async () => {
        for await (const ip of azure.network.publicIPAddresses.list(AZURE_WORLD.resourceGroup))
          if (ip.ipAddress === address) throw new Error(`${ip.name} still there`);
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  });
});
