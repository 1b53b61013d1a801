import type { V1Service } from "@kubernetes/client-node";
import { randomUUID } from "node:crypto";
import { AssociateSubnetCidrBlockCommand, AssociateVpcCidrBlockCommand } from "@aws-sdk/client-ec2";
import { createAwsClients } from "../../../providers/aws/clients.ts";
import { AwsProvider } from "../../../providers/aws/provider.ts";
import type { LoadBalancerIntent } from "../../../providers/provider.ts";
import { intent } from "../../unit/support/awsIntent.ts";
import type { TestAws, TestCluster, TestInstance, TestNetwork } from "../../harness/index.ts";
import { mergePatch, waitFor } from "../../harness/index.ts";
import { AWS_CLASS } from "../../harness/controller.ts";

export interface AwsWorld {
  network: TestNetwork;
  instances: TestInstance[];
  nodes: string[];
}

/** A VPC with tagged subnets in two zones and `nodeCount` instances registered as Ready Nodes. */
export async function awsWorld(
  cluster: TestCluster,
  aws: TestAws,
  nodeCount = 2,
  opts: { nodeSecurityGroups?: (vpcId: string) => Promise<string[]>; internetFacing?: boolean } = {},
): Promise<AwsWorld> {
  const network = await aws.createNetwork(cluster.namespace, { internal: true });
  if (opts.internetFacing)
    network.subnets.push(
      ...(await aws.createNetworkSubnetsForRole(network.vpcId, cluster.namespace, "kubernetes.io/role/elb")),
    );
  const securityGroupIds = await opts.nodeSecurityGroups?.(network.vpcId);
  const instances = await aws.createInstances(
    network.subnets[0]!.subnetId,
    nodeCount,
    securityGroupIds ? { securityGroupIds } : {},
  );
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

/**
 * Gives `vpcId` an Amazon-provided IPv6 block and each of `subnetIds` a /64 of it, as a dualstack NLB's subnets
 * need (awsWorld's subnets have IPv4 alone).
 */
export async function withIpv6(aws: TestAws, vpcId: string, subnetIds: readonly string[]): Promise<void> {
  const vpc = await aws.ec2.send(
    new AssociateVpcCidrBlockCommand({ VpcId: vpcId, AmazonProvidedIpv6CidrBlock: true }),
  );
  // The block is a /56 (a:b:c:dd00::/56): its first /64s, one per subnet.
  const [a, b, c, d] = vpc.Ipv6CidrBlockAssociation!.Ipv6CidrBlock!.split("::")[0]!.split(":");
  for (const [i, subnetId] of subnetIds.entries()) {
    const block = `${a}:${b}:${c}:${(parseInt(d!, 16) + i).toString(16)}::/64`;
    await aws.ec2.send(new AssociateSubnetCidrBlockCommand({ SubnetId: subnetId, Ipv6CidrBlock: block }));
  }
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

/** The Service's Event of this type and reason, waited for: an Event may trail the status it tells of. */
export async function waitForServiceEvent(
  cluster: TestCluster,
  name: string,
  type: "Normal" | "Warning",
  reason: string,
): Promise<{ type: string; reason: string; message: string }> {
  return waitFor(`the ${reason} Event`, async () =>
    (await serviceEvents(cluster, name)).find((e) => e.type === type && e.reason === reason),
  );
}

export async function patchService(cluster: TestCluster, name: string, body: object): Promise<V1Service> {
  return cluster.core.patchNamespacedService({ name, namespace: cluster.namespace, body }, mergePatch);
}

/**
 * Portico's AWS provider on its own, with real SDK clients against this worker's emulator: for settings whose
 * annotations the controller's catalog decides on, the provider is driven with the intent the controller would
 * build. `observationTtlMs: 0` makes every ensure observe everything.
 */
export function directProvider(cluster: TestCluster): AwsProvider {
  return new AwsProvider({
    clusterName: cluster.namespace,
    clients: createAwsClients(),
    observationTtlMs: 0,
  });
}

/** An intent for a Service `name` whose nodes are the world's instances, with `over` on top. */
export function intentFor(
  world: AwsWorld,
  name: string,
  over: Partial<LoadBalancerIntent> = {},
): LoadBalancerIntent {
  return intent({
    service: { namespace: "shop", name, uid: randomUUID() },
    nodes: world.instances.map((inst, i) => ({ name: `node-${i}`, providerID: inst.providerID })),
    endpoints: [],
    ...over,
  });
}

/** Cloud calls made while `fn` ran, by operation (those `only` matches, when given). */
export async function callsDuring(
  provider: AwsProvider,
  fn: () => Promise<unknown>,
  only: RegExp = /./,
): Promise<Record<string, number>> {
  const before = new Map(provider.clients.calls);
  await fn();
  return Object.fromEntries(
    [...provider.clients.calls]
      .map(([op, n]): [string, number] => [op, n - (before.get(op) ?? 0)])
      .filter(([op, n]) => n > 0 && only.test(op)),
  );
}

/** Mutating cloud calls made while `fn` ran, by operation. */
export function writesDuring(
  provider: AwsProvider,
  fn: () => Promise<unknown>,
): Promise<Record<string, number>> {
  return callsDuring(
    provider,
    fn,
    /:(Create|Delete|Modify|Register|Deregister|Set|Authorize|Revoke|Add|Remove)/,
  );
}
