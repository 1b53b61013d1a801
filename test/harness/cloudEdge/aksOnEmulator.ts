// Portico as on AKS, against the Azure emulator: the emulator on this machine reachable from the pods at the LAN's
// gateway, a virtual network holding the LAN's nodes, the pods and a subnet for internal frontends, the cluster's
// network security group on the nodes' and pods' subnets (as AKS places it), and the aks overlay installed with
// a service principal's secret standing in for workload identity. With `dataPlane`, the load balancers carry
// packets (azureEdge.ts). Everything goes when the test (or the set-up) finishes. The end-to-end tests start it
// for their namespace (aksOnEmulator), Kubernetes' own tests' set-up for the whole cluster (aksOnCluster).
import { EDGE_SITES } from "./addresses.ts";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAzureEmulator, trustCertificateAuthority } from "../../emulators/azure/index.ts";
import { AZURE_WORLD, TestAzure } from "../azure.ts";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { reachableFromPods, type E2eNamespace } from "../localCluster/usage.ts";
import { waitFor } from "../wait.ts";
import type { CloudCluster, OnClusterOptions, OnEmulatorOptions } from "./teardown.ts";
import { installPortico, uninstall } from "../localCluster/install.ts";
import { LAN_GATEWAY } from "../netns.ts";
import { AzureEdge } from "./azureEdge.ts";

/**
 * The network the nodes live in, as Azure would hold it. The nodes' subnet holds the LAN's nodes (192.0.2.11–13)
 * and not its client (192.0.2.2), which reaches the load balancers from outside, as an Internet client does.
 */
export const VNET = {
  name: "lan-vnet",
  nodes: "192.0.2.8/29",
  frontends: "192.0.2.176/28",
  pods: "10.244.0.0/16",
} as const;

export const AKS_CLASS = "portico.io/azure-lb";

export interface AksOnEmulator {
  azure: TestAzure;
  /** With `dataPlane`: the edge that carries the load balancers. */
  edge?: AzureEdge;
}

/** Portico as on AKS for a test's namespace: its Services of Portico's class go before Portico does. */
export function aksOnEmulator(ns: E2eNamespace, opts: OnEmulatorOptions): Promise<AksOnEmulator> {
  return aksOnCluster(ns.context, { ...opts, servicesNamespace: ns.name });
}

export async function aksOnCluster(cluster: CloudCluster, opts: OnClusterOptions): Promise<AksOnEmulator> {
  const { defer } = opts;
  const dir = await mkdtemp(join(tmpdir(), "portico-e2e-azure-"));
  const emulator = await startAzureEmulator({ dir, alsoReachedAt: [LAN_GATEWAY] });
  defer(async () => {
    await emulator.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const port = Number(new URL(emulator.url).port);
  const forward = await reachableFromPods(cluster, port, dir);
  defer(() => forward.stop());
  // This process talks to the emulator at its own address; the pods at the LAN's gateway.
  trustCertificateAuthority(emulator.caCertPath);
  Object.assign(process.env, emulator.environment);
  const azure = await TestAzure.fresh();
  const nsg = await azure.network.networkSecurityGroups.get(
    AZURE_WORLD.resourceGroup,
    AZURE_WORLD.securityGroupName,
  );
  const guarded = { networkSecurityGroup: { id: nsg.id! } };
  await azure.network.virtualNetworks.beginCreateOrUpdateAndWait(AZURE_WORLD.resourceGroup, VNET.name, {
    location: AZURE_WORLD.location,
    addressSpace: { addressPrefixes: [VNET.nodes, VNET.frontends, VNET.pods] },
    subnets: [
      { name: "nodes", addressPrefix: VNET.nodes, ...guarded },
      { name: "frontends", addressPrefix: VNET.frontends },
      { name: "pods", addressPrefix: VNET.pods, ...guarded },
    ],
  });

  let edge: AzureEdge | undefined;
  if (opts.dataPlane) {
    const started = await AzureEdge.start({
      lanNamespace: cluster.client.switchPort.namespace,
      clientNamespace: cluster.client.namespace,
      podRoutes: cluster.nodes.map((n) => ({ cidr: n.layout.podCidr, via: n.host.ipv4 })),
      nodeNamespaces: cluster.nodes.map((n) => n.host.namespace),
      site: EDGE_SITES.azure,
      network: azure.network,
      reportHealth: (rules) => azure.reportRuleHealth(rules),
    });
    edge = started;
    defer(() => started.stop());
  }

  const inCluster = `https://${LAN_GATEWAY}:${port}`;
  const env = {
    ...emulator.environment,
    AZURE_AUTHORITY_HOST: inCluster,
    AZURE_RESOURCE_MANAGER_ENDPOINT: inCluster,
    PORTICO_AZURE_RESOURCE_GROUP: AZURE_WORLD.resourceGroup,
    PORTICO_AZURE_LOCATION: AZURE_WORLD.location,
    PORTICO_AZURE_VNET_NAME: VNET.name,
    // Where internal frontends take their addresses.
    PORTICO_AZURE_SUBNET_NAME: "frontends",
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
    ...(opts.controllerPatches ?? []),
  ];
  const objects = await installPortico(cluster.kubeconfig, {
    overlay: "aks",
    image: cluster.porticoImage,
    kustomization: {
      namespace: "portico-aks",
      namePrefix: "aks-",
      configMapGenerator: [
        { name: "emulator-ca", literals: [`ca.crt=${await readFile(emulator.caCertPath, "utf8")}`] },
      ],
      patches: [{ target: { kind: "Deployment" }, patch: JSON.stringify(patch) }],
    },
  });
  defer(async () => {
    const namespace = opts.servicesNamespace;
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    // The test's Services first, while the controller runs to take their frontends away and lift their
    // finalizers: left behind, they would hold the test's namespace in Terminating.
    const ours = async () =>
      namespace
        ? (await core.listNamespacedService({ namespace })).items.filter(
            (s) => s.spec?.loadBalancerClass === AKS_CLASS,
          )
        : [];
    for (const svc of await ours())
      await core.deleteNamespacedService({ name: svc.metadata!.name!, namespace: namespace! });
    await waitFor("the Azure Services to be gone", async () => (await ours()).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await uninstall(cluster.kubeconfig, objects);
  });
  return { azure, ...(edge ? { edge } : {}) };
}
