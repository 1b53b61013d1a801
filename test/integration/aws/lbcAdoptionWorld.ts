// What the AWS Load Balancer Controller (LBC) leaves in an account for a Service, made with the real SDK clients as
// LBC makes it: its names (k8s-<ns8>-<name8>-<hash10>, the hash over its cluster name, the Service's UID and more),
// its tracking tags (elbv2.k8s.aws/cluster, service.k8s.aws/stack, service.k8s.aws/resource), a frontend security
// group on the NLB, instance targets at the node port, and its finalizer on the Service.
import { CreateSecurityGroupCommand } from "@aws-sdk/client-ec2";
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DescribeTagsCommand,
  DescribeTargetHealthCommand,
  RegisterTargetsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { V1MicroTime, type V1Service } from "@kubernetes/client-node";
import { createHash, randomBytes } from "node:crypto";
import { LBC_NLB_CLASS } from "../../../providers/classes.ts";
import { LBC_FINALIZER, lbcLoadBalancerName } from "../../../providers/aws/lbc/adoption.ts";
import type { TestAws, TestCluster, TestInstance } from "../../harness/index.ts";
import { mergePatch } from "../../harness/index.ts";
import type { AwsWorld } from "./fixtures.ts";

export interface LbcStack {
  loadBalancerArn: string;
  dnsName: string;
  targetGroupArn: string;
  listenerArn: string;
  securityGroupId: string;
}

/**
 * A Service LBC serves (port 80 → 8080), carrying LBC's finalizer as LBC leaves it: of LBC's class, or with
 * `unclassed` of no class (LBC then serves it by its `aws-load-balancer-type` annotation).
 */
export async function lbcService(
  cluster: TestCluster,
  name: string,
  annotations: Record<string, string> = {},
  opts: { unclassed?: boolean } = {},
): Promise<V1Service> {
  await cluster.createService(
    name,
    {
      type: "LoadBalancer",
      ...(opts.unclassed ? {} : { loadBalancerClass: LBC_NLB_CLASS }),
      selector: { app: name },
      ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
    },
    annotations,
  );
  return cluster.core.patchNamespacedService(
    { name, namespace: cluster.namespace, body: { metadata: { finalizers: [LBC_FINALIZER] } } },
    mergePatch,
  );
}

/** LBC's target group name: `k8s-<ns8>-<name8>-<hash10>`, the hash over what it cannot change in place. */
function lbcTargetGroupName(
  cluster: string,
  svc: V1Service,
  tgPort: number,
  svcPort: number,
  targetType: string,
): string {
  const uid = svc.metadata!.uid!;
  const digest = createHash("sha256")
    .update(cluster + uid + uid + String(tgPort) + String(svcPort) + targetType + "TCP" + "TCP" + "10")
    .digest("hex");
  const clean = (s: string) => s.replace(/[^A-Za-z0-9]/g, "").slice(0, 8);
  return `k8s-${clean(svc.metadata!.namespace!)}-${clean(svc.metadata!.name!)}-${digest.slice(0, 10)}`;
}

/**
 * The NLB, frontend security group, target group and TCP:80 listener LBC makes for `svc` when running with
 * `--cluster-name lbcCluster`: instance targets (`targets`, registered at the node port), or with `podTargets`
 * ip targets (pod addresses at the target port 8080, as for `aws-load-balancer-nlb-target-type: ip`).
 */
export async function lbcStack(
  aws: TestAws,
  world: AwsWorld,
  svc: V1Service,
  opts: {
    lbcCluster: string;
    targets: TestInstance[];
    podTargets?: string[];
    scheme?: "internal" | "internet-facing";
  },
): Promise<LbcStack> {
  const ns = svc.metadata!.namespace!;
  const name = svc.metadata!.name!;
  const scheme = opts.scheme ?? "internal";
  const stack = `${ns}/${name}`;
  const tags = (resource: string) => [
    { Key: "elbv2.k8s.aws/cluster", Value: opts.lbcCluster },
    { Key: "service.k8s.aws/stack", Value: stack },
    { Key: "service.k8s.aws/resource", Value: resource },
  ];
  const ip = opts.podTargets !== undefined;
  const tgPort = ip ? 8080 : svc.spec!.ports![0]!.nodePort!;
  const lbName = lbcLoadBalancerName(
    opts.lbcCluster,
    { namespace: ns, name, uid: svc.metadata!.uid! },
    scheme,
  );
  const sg = await aws.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: `${lbName}-${randomBytes(2).toString("hex")}`,
      Description: `[k8s] Managed SecurityGroup for LoadBalancer`,
      VpcId: world.network.vpcId,
      TagSpecifications: [{ ResourceType: "security-group", Tags: tags("ManagedLBSecurityGroup") }],
    }),
  );
  const lb = await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: lbName,
      Type: "network",
      Scheme: scheme,
      Subnets: world.network.subnets.map((s) => s.subnetId),
      SecurityGroups: [sg.GroupId!],
      Tags: tags("LoadBalancer"),
    }),
  );
  const tg = await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: lbcTargetGroupName(opts.lbcCluster, svc, tgPort, 80, ip ? "ip" : "instance"),
      Protocol: "TCP",
      Port: tgPort,
      VpcId: world.network.vpcId,
      TargetType: ip ? "ip" : "instance",
      HealthCheckProtocol: "TCP",
      HealthCheckPort: "traffic-port",
      HealthCheckIntervalSeconds: 10,
      HealthCheckTimeoutSeconds: 10,
      HealthyThresholdCount: 3,
      UnhealthyThresholdCount: 3,
      Tags: tags(`${stack}:80`),
    }),
  );
  const targetGroupArn = tg.TargetGroups![0]!.TargetGroupArn!;
  await aws.elbv2.send(
    new RegisterTargetsCommand({
      TargetGroupArn: targetGroupArn,
      Targets: ip
        ? opts.podTargets!.map((address) => ({ Id: address, Port: tgPort }))
        : opts.targets.map((t) => ({ Id: t.instanceId, Port: tgPort })),
    }),
  );
  const loadBalancerArn = lb.LoadBalancers![0]!.LoadBalancerArn!;
  const listener = await aws.elbv2.send(
    new CreateListenerCommand({
      LoadBalancerArn: loadBalancerArn,
      Port: 80,
      Protocol: "TCP",
      DefaultActions: [{ Type: "forward", TargetGroupArn: targetGroupArn }],
    }),
  );
  return {
    loadBalancerArn,
    dnsName: lb.LoadBalancers![0]!.DNSName!,
    targetGroupArn,
    listenerArn: listener.Listeners![0]!.ListenerArn!,
    securityGroupId: sg.GroupId!,
  };
}

/** An NLB LBC made for an Ingress `namespace/name` (Ingress tags), with a listener and an empty target group. */
export async function lbcIngressNlb(
  aws: TestAws,
  world: AwsWorld,
  lbcCluster: string,
  stack: string,
): Promise<{ loadBalancerArn: string; targetGroupArn: string }> {
  const tags = (resource: string) => [
    { Key: "elbv2.k8s.aws/cluster", Value: lbcCluster },
    { Key: "ingress.k8s.aws/stack", Value: stack },
    { Key: "ingress.k8s.aws/resource", Value: resource },
  ];
  const suffix = randomBytes(5).toString("hex");
  const lb = await aws.elbv2.send(
    new CreateLoadBalancerCommand({
      Name: `k8s-ingress-${suffix}`,
      Type: "network",
      Scheme: "internal",
      Subnets: world.network.subnets.map((s) => s.subnetId),
      Tags: tags("LoadBalancer"),
    }),
  );
  const tg = await aws.elbv2.send(
    new CreateTargetGroupCommand({
      Name: `k8s-ingress-tg-${suffix}`,
      Protocol: "TCP",
      Port: 30080,
      VpcId: world.network.vpcId,
      TargetType: "ip",
      Tags: tags(`${stack}-web:80`),
    }),
  );
  return {
    loadBalancerArn: lb.LoadBalancers![0]!.LoadBalancerArn!,
    targetGroupArn: tg.TargetGroups![0]!.TargetGroupArn!,
  };
}

/** A resource's tags, as a record. */
export async function tagsOf(aws: TestAws, arn: string): Promise<Record<string, string>> {
  const out = await aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: [arn] }));
  return Object.fromEntries((out.TagDescriptions?.[0]?.Tags ?? []).map((t) => [t.Key!, t.Value!]));
}

/** A target group's registered targets that are not draining, as `id:port`, sorted. */
export async function targetsOf(aws: TestAws, targetGroupArn: string): Promise<string[]> {
  const out = await aws.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: targetGroupArn }));
  return (out.TargetHealthDescriptions ?? [])
    .filter((d) => d.TargetHealth?.State !== "draining")
    .map((d) => `${d.Target!.Id}:${d.Target!.Port}`)
    .sort();
}

/** LBC's leader Lease, as LBC's leader renews it: held by `holder`, renewed now. */
export async function lbcLease(cluster: TestCluster, name: string, holder: string): Promise<void> {
  const now = new V1MicroTime();
  await cluster.coordination.createNamespacedLease({
    namespace: cluster.namespace,
    body: {
      metadata: { name },
      spec: {
        holderIdentity: holder,
        leaseDurationSeconds: 300,
        acquireTime: now,
        renewTime: now,
      },
    },
  });
}
