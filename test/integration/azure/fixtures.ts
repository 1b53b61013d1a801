import type { V1Service } from "@kubernetes/client-node";
import type { TestAzure, TestCluster } from "../../harness/index.ts";
import { AZURE_CLASS, AZURE_WORLD, waitFor } from "../../harness/index.ts";
import type { ServiceWant } from "./inventory.ts";

export { patchService, readyCondition, serviceEvents, waitForServiceEvent } from "../aws/fixtures.ts";

export interface AzureWorld {
  nodes: string[];
  nodeIPs: string[];
}

/** `nodeCount` Ready Nodes with InternalIPs in the cluster's node subnet, as AKS's kubelets register them. */
export async function azureWorld(cluster: TestCluster, azure: TestAzure, nodeCount = 2): Promise<AzureWorld> {
  const nodes: string[] = [];
  const nodeIPs: string[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const node = await addNode(cluster, azure, i);
    nodes.push(node.name);
    nodeIPs.push(node.ip);
  }
  return { nodes, nodeIPs };
}

export async function addNode(
  cluster: TestCluster,
  azure: TestAzure,
  i: number,
): Promise<{ name: string; ip: string }> {
  const ip = `10.0.1.${10 + i}`;
  const node = await cluster.createNode(`node-${i}`, {
    internalIP: ip,
    providerID: `azure:///subscriptions/${azure.subscriptionId}/resourceGroups/${AZURE_WORLD.resourceGroup}/providers/Microsoft.Compute/virtualMachines/node-${i}`,
    labels: { "topology.kubernetes.io/zone": `${AZURE_WORLD.location}-1` },
  });
  return { name: node.metadata!.name!, ip };
}

export function lbService(
  ports: NonNullable<V1Service["spec"]>["ports"] = [
    { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
  ],
  spec: Partial<NonNullable<V1Service["spec"]>> = {},
): V1Service["spec"] {
  return { type: "LoadBalancer", loadBalancerClass: AZURE_CLASS, selector: { app: "web" }, ports, ...spec };
}

export async function waitForIP(cluster: TestCluster, name: string, timeoutMs = 20_000): Promise<string> {
  return waitFor(
    `Service ${name} to get a load balancer IP`,
    async () => {
      const svc = await cluster.getService(name);
      return svc.status?.loadBalancer?.ingress?.[0]?.ip;
    },
    { timeoutMs },
  );
}

/** A pod address in the pods subnet (Azure CNI). */
export const podIP = (i: number): string => `10.0.64.${10 + i}`;

/** Annotations that make a Service internal (a frontend in the node subnet, on the cluster's internal load balancer). */
export const INTERNAL = { "service.beta.kubernetes.io/azure-load-balancer-internal": "true" } as const;

/** The test namespace's Services as inventoryProblems (inventory.ts) takes them. */
export async function serviceWants(cluster: TestCluster): Promise<ServiceWant[]> {
  const list = (await cluster.core.listNamespacedService({ namespace: cluster.namespace })).items;
  return list.map((s) => ({
    name: s.metadata!.name!,
    uid: s.metadata!.uid!,
    internal: s.metadata!.annotations?.["service.beta.kubernetes.io/azure-load-balancer-internal"] === "true",
    ports: (s.spec!.ports ?? []).map((p) => ({
      protocol: p.protocol as "TCP" | "UDP",
      port: p.port,
      nodePort: p.nodePort!,
    })),
    ip: s.status?.loadBalancer?.ingress?.[0]?.ip,
  }));
}
