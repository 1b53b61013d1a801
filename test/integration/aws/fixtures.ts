import type { V1Service } from "@kubernetes/client-node";
import type { TestAws, TestCluster, TestInstance, TestNetwork } from "../../harness/index.ts";
import { mergePatch, waitFor } from "../../harness/index.ts";
import { AWS_CLASS } from "../../harness/controller.ts";

export interface AwsWorld {
  network: TestNetwork;
  instances: TestInstance[];
  nodes: string[];
}

/** A VPC with tagged subnets in two zones and `nodeCount` instances registered as Ready Nodes. */
export async function awsWorld(cluster: TestCluster, aws: TestAws, nodeCount = 2): Promise<AwsWorld> {
  const network = await aws.createNetwork(cluster.namespace, { internal: true });
  const instances = await aws.createInstances(network.subnets[0]!.subnetId, nodeCount);
  const nodes: string[] = [];
  for (const [i, inst] of instances.entries()) {
    const node = await cluster.createNode(`node-${i}`, {
      providerID: inst.providerID,
      internalIP: inst.privateIp,
      labels: { "topology.kubernetes.io/zone": inst.availabilityZone },
    });
    nodes.push(node.metadata!.name!);
  }
  return { network, instances, nodes };
}

export function lbService(
  ports: NonNullable<V1Service["spec"]>["ports"] = [
    { name: "http", port: 80, targetPort: 8080, protocol: "TCP" },
  ],
  spec: Partial<NonNullable<V1Service["spec"]>> = {},
): V1Service["spec"] {
  return { type: "LoadBalancer", loadBalancerClass: AWS_CLASS, selector: { app: "web" }, ports, ...spec };
}

export async function waitForHostname(cluster: TestCluster, name: string): Promise<string> {
  return waitFor(`Service ${name} to get a load balancer hostname`, async () => {
    const svc = await cluster.getService(name);
    return svc.status?.loadBalancer?.ingress?.[0]?.hostname;
  });
}

export { readyCondition } from "../../harness/index.ts";

/** Events recorded on a Service, as `kubectl describe` lists them. */
export async function serviceEvents(
  cluster: TestCluster,
  name: string,
): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await cluster.core.listNamespacedEvent({
    namespace: cluster.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map((e) => ({ type: e.type ?? "", reason: e.reason ?? "", message: e.message ?? "" }));
}

export async function patchService(cluster: TestCluster, name: string, body: object): Promise<V1Service> {
  return cluster.core.patchNamespacedService({ name, namespace: cluster.namespace, body }, mergePatch);
}
