// The local cluster's nodes as EC2 instances, so that NLBs can have instance targets: the VPC takes the LAN's
// range as a second block, a subnet of it holds one instance per node at the node's own address, in a node
// security group tagged for the cluster (where Portico opens the node ports to the NLB, as the AWS Load Balancer
// Controller does), and each Node's spec.providerID names its instance, as the AWS cloud provider sets it.
//
// A Node's providerID can be set once and never changed, while every test starts a fresh emulator; so each
// instance is launched right after seeding the emulator's random generator with a number of its own (moto's
// documented `/moto-api/seed`), which gives it the same instance ID in every emulator and every run.
import {
  AssociateVpcCidrBlockCommand,
  CreateSubnetCommand,
  DescribeImagesCommand,
  RunInstancesCommand,
} from "@aws-sdk/client-ec2";
import type { CoreV1Api } from "@kubernetes/client-node";
import type { TestAws } from "../aws.ts";
import { mergePatch } from "../kube.ts";

export const NODE_SUBNET = "192.0.2.0/24";
const SEED_BASE = 27_000;

export interface NodeInstance {
  node: string;
  instanceId: string;
  ip: string;
}

export async function nodeInstances(
  aws: TestAws,
  emulatorUrl: string,
  vpcId: string,
  cluster: string,
  nodes: readonly { name: string; ip: string }[],
  core: CoreV1Api,
): Promise<{ instances: NodeInstance[]; securityGroupId: string }> {
  await aws.ec2.send(new AssociateVpcCidrBlockCommand({ VpcId: vpcId, CidrBlock: NODE_SUBNET }));
  const zone = `${aws.region}a`;
  const subnet = await aws.ec2.send(
    new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: NODE_SUBNET, AvailabilityZone: zone }),
  );
  const securityGroupId = await aws.createSecurityGroup(vpcId, "nodes", {
    [`kubernetes.io/cluster/${cluster}`]: "owned",
  });
  const imageId = (await aws.ec2.send(new DescribeImagesCommand({}))).Images?.[0]?.ImageId;
  if (!imageId) throw new Error("the AWS emulator offers no machine image to start instances from");
  const instances: NodeInstance[] = [];
  for (const [i, node] of [...nodes].sort((a, b) => a.name.localeCompare(b.name)).entries()) {
    const seeded = await fetch(`${emulatorUrl}/moto-api/seed?a=${SEED_BASE + i}`, { method: "POST" });
    if (!seeded.ok) throw new Error(`seeding the AWS emulator: HTTP ${seeded.status}`);
    const out = await aws.ec2.send(
      new RunInstancesCommand({
        ImageId: imageId,
        MinCount: 1,
        MaxCount: 1,
        InstanceType: "t3.medium",
        SubnetId: subnet.Subnet!.SubnetId!,
        PrivateIpAddress: node.ip,
        SecurityGroupIds: [securityGroupId],
      }),
    );
    const instanceId = out.Instances![0]!.InstanceId!;
    const providerID = `aws:///${zone}/${instanceId}`;
    const current = (await core.readNode({ name: node.name })).spec?.providerID;
    if (!current) await core.patchNode({ name: node.name, body: { spec: { providerID } } }, mergePatch);
    else if (current !== providerID)
      throw new Error(
        `node ${node.name} already names ${current}, not ${providerID}: a Node's providerID cannot change (was the emulator's seeding changed?)`,
      );
    instances.push({ node: node.name, instanceId, ip: node.ip });
  }
  return { instances, securityGroupId };
}
