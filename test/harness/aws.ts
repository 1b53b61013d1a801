import {
  CreateNetworkInterfaceCommand,
  CreateSecurityGroupCommand,
  CreateTagsCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  EC2Client,
  RunInstancesCommand,
} from "@aws-sdk/client-ec2";
import { ElasticLoadBalancingV2Client } from "@aws-sdk/client-elastic-load-balancing-v2";
import { resetAwsEndpoint, type AwsEndpoint } from "./awsEmulator.ts";

export interface TestInstance {
  instanceId: string;
  privateIp: string;
  availabilityZone: string;
  /** What a kubelet on this instance would put in `node.spec.providerID`. */
  providerID: string;
}

export interface TestNetwork {
  vpcId: string;
  /** One subnet per availability zone, tagged for load balancers of the given cluster. */
  subnets: { subnetId: string; availabilityZone: string }[];
}

/**
 * A test's AWS account: real SDK clients pointed (through AWS_ENDPOINT_URL) at this worker's emulator,
 * which is reset before the test starts.
 */
export class TestAws {
  readonly ec2: EC2Client;
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly region = process.env.AWS_REGION ?? "us-east-1";
  private nextSubnet = 0;

  /** Clients of the emulator at `url` (by default the one AWS_ENDPOINT_URL names, which the SDK reads itself). */
  constructor(url?: string) {
    const config = url ? { endpoint: url } : {};
    this.ec2 = new EC2Client(config);
    this.elbv2 = new ElasticLoadBalancingV2Client(config);
  }

  static async fresh(url?: string): Promise<TestAws> {
    const endpoint: AwsEndpoint = {
      url: url ?? process.env.AWS_ENDPOINT_URL!,
      kind: process.env.PORTICO_AWS_EMULATOR === "localstack" ? "localstack" : "moto",
    };
    await resetAwsEndpoint(endpoint);
    return new TestAws(url);
  }

  /** A VPC with a subnet in each of `zones`, tagged as EKS tags them for load balancers. */
  async createNetwork(
    cluster: string,
    opts: { zones?: string[]; internal?: boolean } = {},
  ): Promise<TestNetwork> {
    const vpc = await this.ec2.send(new CreateVpcCommand({ CidrBlock: "10.0.0.0/16" }));
    const vpcId = vpc.Vpc!.VpcId!;
    const role = opts.internal ? "kubernetes.io/role/internal-elb" : "kubernetes.io/role/elb";
    return { vpcId, subnets: await this.createNetworkSubnetsForRole(vpcId, cluster, role, opts.zones) };
  }

  /** One subnet per zone in `vpcId`, tagged with a load-balancer `role` for `cluster`. */
  async createNetworkSubnetsForRole(
    vpcId: string,
    cluster: string,
    role: string,
    zones = [`${this.region}a`, `${this.region}b`],
  ) {
    const subnets = [];
    for (const zone of zones) {
      const cidr = `10.0.${this.nextSubnet++}.0/24`;
      const subnet = await this.ec2.send(
        new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: zone }),
      );
      const subnetId = subnet.Subnet!.SubnetId!;
      await this.ec2.send(
        new CreateTagsCommand({
          Resources: [subnetId],
          Tags: [
            { Key: role, Value: "1" },
            { Key: `kubernetes.io/cluster/${cluster}`, Value: "shared" },
          ],
        }),
      );
      subnets.push({ subnetId, availabilityZone: zone });
    }
    return subnets;
  }

  /** A security group in `vpcId`, e.g. a node group's or a pod's, with `tags`. */
  async createSecurityGroup(vpcId: string, name: string, tags: Record<string, string> = {}): Promise<string> {
    const out = await this.ec2.send(
      new CreateSecurityGroupCommand({
        GroupName: name,
        Description: `test group ${name}`,
        VpcId: vpcId,
        ...(Object.keys(tags).length
          ? {
              TagSpecifications: [
                {
                  ResourceType: "security-group",
                  Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
                },
              ],
            }
          : {}),
      }),
    );
    return out.GroupId!;
  }

  /** A network interface holding `ip` in `subnetId` with `groups`, as the VPC CNI gives a pod. */
  async createPodInterface(subnetId: string, ip: string, groups: string[]): Promise<string> {
    const out = await this.ec2.send(
      new CreateNetworkInterfaceCommand({ SubnetId: subnetId, PrivateIpAddress: ip, Groups: groups }),
    );
    return out.NetworkInterface!.NetworkInterfaceId!;
  }

  /** EC2 instances in `subnetId`, one per name, ready to back Nodes (in `securityGroupIds`, if given). */
  async createInstances(
    subnetId: string,
    count: number,
    opts: { securityGroupIds?: string[] } = {},
  ): Promise<TestInstance[]> {
    const images = await this.ec2.send(new DescribeImagesCommand({}));
    const imageId = images.Images?.[0]?.ImageId;
    if (!imageId) throw new Error("the AWS emulator offers no machine image to start instances from");
    const out = await this.ec2.send(
      new RunInstancesCommand({
        ImageId: imageId,
        MinCount: count,
        MaxCount: count,
        InstanceType: "t3.medium",
        SubnetId: subnetId,
        ...(opts.securityGroupIds ? { SecurityGroupIds: opts.securityGroupIds } : {}),
      }),
    );
    return (out.Instances ?? []).map((i) => {
      const availabilityZone = i.Placement!.AvailabilityZone!;
      return {
        instanceId: i.InstanceId!,
        privateIp: i.PrivateIpAddress!,
        availabilityZone,
        providerID: `aws:///${availabilityZone}/${i.InstanceId!}`,
      };
    });
  }
}
