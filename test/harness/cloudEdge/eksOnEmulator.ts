// Portico as on EKS, against the AWS emulator: moto on this machine reachable from the pods at the LAN's gateway,
// a VPC tagged for the eks overlay's cluster name with the nodes as its instances (nodeInstances.ts), and the
// overlay installed with static test credentials standing in for IRSA or Pod Identity. With `dataPlane`, the NLBs
// carry packets (nlbEdge.ts) and the controller learns its targets' health from the edge's checks
// (healthReport.ts). Everything goes when the test (or the set-up) finishes. The end-to-end tests start it for
// their namespace (eksOnEmulator), Kubernetes' own tests' set-up for the whole cluster (eksOnCluster).
import { EDGE_SITES } from "./addresses.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMoto } from "../awsEmulator.ts";
import { TestAws } from "../aws.ts";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { reachableFromPods, type E2eNamespace } from "../localCluster/usage.ts";
import { waitFor } from "../wait.ts";
import type { CloudCluster, OnClusterOptions, OnEmulatorOptions } from "./teardown.ts";
import { installPortico, uninstall } from "../localCluster/install.ts";
import { LAN_GATEWAY } from "../netns.ts";
import { ensureTools } from "../tools.ts";
import { startHealthReport } from "./healthReport.ts";
import { NlbEdge } from "./nlbEdge.ts";
import { nodeInstances, type NodeInstance } from "./nodeInstances.ts";
import { main as porticoctl } from "../../../controller/cli/porticoctl.ts";

/**
 * The zone of the NLBs' DNS names, as the emulator gives them (<name>-1.<region>.elb.amazonaws.com) and as AWS
 * does (<name>-<id>.elb.<region>.amazonaws.com): the cluster DNS sends it to the edge's DNS.
 */
export const NLB_DNS_ZONE = "amazonaws.com";

/** The cluster name the eks overlay ships with; the emulator's subnets are tagged for it. */
export const EKS_CLUSTER_NAME = "my-cluster";

export interface EksOnEmulator {
  aws: TestAws;
  /** The nodes' instances, which their providerIDs name: instance targets are these. */
  instances: NodeInstance[];
  /** The nodes' security group, where Portico opens the node ports to the NLBs. */
  nodeSecurityGroup: string;
  /** With `dataPlane`: the edge that carries the NLBs. */
  edge?: NlbEdge;
  /** With `dataPlane`: the AWS endpoint a user's tools (porticoctl) use to see the edge's target health. */
  healthEndpoint?: string;
}

/** Portico as on EKS for a test's namespace: its NLB Services go before Portico does. */
export function eksOnEmulator(
  ns: E2eNamespace,
  opts: OnEmulatorOptions & EdgeDelays,
): Promise<EksOnEmulator> {
  return eksOnCluster(ns.context, { ...opts, servicesNamespace: ns.name });
}

/** ELBv2's delays on the edge, when not the edge's own scaled-down defaults (a benchmark's, at AWS's figures). */
export interface EdgeDelays {
  registrationDelayMs?: number;
}

export async function eksOnCluster(
  cluster: CloudCluster,
  opts: OnClusterOptions & EdgeDelays,
): Promise<EksOnEmulator> {
  const { defer } = opts;
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const tools = await ensureTools("all");
  const dir = await mkdtemp(join(tmpdir(), "portico-e2e-aws-"));
  const moto = await startMoto(tools.motoServer!, dir, 1);
  defer(async () => {
    await moto.process.stop();
    await rm(dir, { recursive: true, force: true });
  });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: moto.endpoint.url,
    PORTICO_AWS_EMULATOR: "moto",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
  });
  const aws = await TestAws.fresh();
  const network = await aws.createNetwork(EKS_CLUSTER_NAME, { internal: true });
  // Public subnets beside the private ones, as an EKS VPC has, for internet-facing NLBs.
  await aws.createNetworkSubnetsForRole(network.vpcId, EKS_CLUSTER_NAME, "kubernetes.io/role/elb");
  const { instances, securityGroupId } = await nodeInstances(
    aws,
    moto.endpoint.url,
    network.vpcId,
    EKS_CLUSTER_NAME,
    cluster.nodes.map((n) => ({ name: n.layout.name, ip: n.layout.ip })),
    core,
  );

  let port = Number(new URL(moto.endpoint.url).port);
  let edge: NlbEdge | undefined;
  if (opts.dataPlane) {
    const started = await NlbEdge.start({
      lanNamespace: cluster.client.switchPort.namespace,
      podRoutes: cluster.nodes.map((n) => ({ cidr: n.layout.podCidr, via: n.host.ipv4 })),
      nodeNamespaces: cluster.nodes.map((n) => n.host.namespace),
      site: EDGE_SITES.nlb,
      clientNamespaces: [cluster.client.namespace],
      elbv2: aws.elbv2,
      ec2: aws.ec2,
      ...(opts.registrationDelayMs !== undefined ? { registrationDelayMs: opts.registrationDelayMs } : {}),
    });
    edge = started;
    defer(() => started.stop());
    const report = await startHealthReport(moto.endpoint.url, started);
    defer(() => report.close());
    port = report.port;
  }
  // The pods reach the emulator (or the health report in front of it) at the LAN's gateway, on the same port.
  const forward = await reachableFromPods(cluster, port, dir);
  defer(() => forward.stop());

  const env = [
    { name: "AWS_ENDPOINT_URL", value: `http://${LAN_GATEWAY}:${port}` },
    { name: "AWS_ACCESS_KEY_ID", value: "test" },
    { name: "AWS_SECRET_ACCESS_KEY", value: "test" },
  ];
  const objects = await installPortico(cluster.kubeconfig, {
    overlay: "eks",
    image: cluster.porticoImage,
    kustomization: {
      namespace: "portico-eks",
      namePrefix: "eks-",
      patches: [
        {
          target: { kind: "Deployment" },
          patch: JSON.stringify([
            ...env.map((value) => ({ op: "add", path: "/spec/template/spec/containers/0/env/-", value })),
            ...(opts.controllerPatches ?? []),
          ]),
        },
      ],
    },
  });
  defer(async () => {
    const namespace = opts.servicesNamespace;
    // The test's NLB Services first, while the controller runs to delete their NLBs and lift their finalizers:
    // left behind, they would hold the test's namespace in Terminating.
    const ours = async () =>
      namespace
        ? (await core.listNamespacedService({ namespace })).items.filter(
            (s) => s.spec?.loadBalancerClass === "portico.io/aws-nlb",
          )
        : [];
    for (const svc of await ours())
      await core.deleteNamespacedService({ name: svc.metadata!.name!, namespace: namespace! });
    await waitFor("the NLB Services to be gone", async () => (await ours()).length === 0, {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
    await uninstall(cluster.kubeconfig, objects);
  });
  return {
    aws,
    instances,
    nodeSecurityGroup: securityGroupId,
    ...(edge ? { edge, healthEndpoint: `http://127.0.0.1:${port}` } : {}),
  };
}

/** The NLB hostname Portico wrote into the Service's status, once it has. */
export function nlbHostname(ns: E2eNamespace, name: string): Promise<string> {
  return waitFor(
    `Service ${name}'s NLB hostname in its status`,
    async () =>
      (await ns.core.readNamespacedService({ name, namespace: ns.name })).status?.loadBalancer?.ingress?.[0]
        ?.hostname,
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** The address the edge carries the Service's NLB on, as its DNS name would resolve. */
export async function nlbAddress(ns: E2eNamespace, edge: NlbEdge, name: string): Promise<string> {
  const hostname = await nlbHostname(ns, name);
  return waitFor(`the edge to carry ${name}'s NLB`, () => edge.addressesOf(hostname)[0]);
}

/**
 * What `porticoctl status` prints for the namespace's Services, asking ELBv2 through the health report as a user's
 * tools would (so target states are the edge's, not the emulator's constant "healthy").
 */
export async function porticoctlStatus(ns: E2eNamespace, healthEndpoint: string): Promise<string> {
  let out = "";
  const saved = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = healthEndpoint;
  try {
    const args = ["status", "-n", ns.name, "--kubeconfig", ns.context.kubeconfig];
    await porticoctl([...args, "--controller-namespace", "portico-eks"], (s) => (out += s));
  } finally {
    process.env.AWS_ENDPOINT_URL = saved;
  }
  return out;
}
