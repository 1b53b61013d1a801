// The security groups a Service brings for its NLB (`security-groups`), by ID or Name, resolved to IDs in the
// Service's VPC as the AWS Load Balancer Controller resolves them. Read only: Portico never changes them.
// The answer is kept a minute in the cluster's reads (../state/clusterReads.ts): the groups change rarely and a
// Service is reconciled often.
import { DescribeSecurityGroupsCommand, type SecurityGroup } from "@aws-sdk/client-ec2";
import { ConfigurationError } from "../../errors.ts";
import { call, type AwsClients } from "../clients.ts";
import { AWS_ANNOTATIONS } from "../annotations/settings.ts";
import type { AgedReads } from "../state/agedReads.ts";

export class UserSecurityGroups {
  private readonly clients: AwsClients;
  private readonly kept: AgedReads<string[]>;

  constructor(clients: AwsClients, kept: AgedReads<string[]>) {
    this.clients = clients;
    this.kept = kept;
  }

  /** The groups' IDs in the order named, the first being the one backend rules refer to. */
  resolve(namesOrIds: string[], vpcId: string): Promise<string[]> {
    return this.kept.get(`${vpcId}/${namesOrIds.join(",")}`, () => this.lookUp(namesOrIds, vpcId));
  }

  private async lookUp(namesOrIds: string[], vpcId: string): Promise<string[]> {
    const ids = namesOrIds.filter((n) => /^sg-[0-9a-f]+$/.test(n));
    const names = namesOrIds.filter((n) => !ids.includes(n));
    const found: SecurityGroup[] = [];
    // Filters, not GroupIds: a missing ID is then reported by name below instead of failing the call.
    for (const [filter, values] of [
      ["group-id", ids],
      ["tag:Name", names],
    ] as const) {
      if (!values.length) continue;
      const out = await call("ec2:DescribeSecurityGroups", () =>
        this.clients.ec2.send(
          new DescribeSecurityGroupsCommand({
            Filters: [
              { Name: filter, Values: [...values] },
              { Name: "vpc-id", Values: [vpcId] },
            ],
          }),
        ),
      );
      found.push(...(out.SecurityGroups ?? []));
    }
    const field = `metadata.annotations[${AWS_ANNOTATIONS.securityGroups}]`;
    return namesOrIds.map((n) => {
      const matches = found.filter(
        (g) => g.GroupId === n || g.Tags?.some((t) => t.Key === "Name" && t.Value === n),
      );
      if (matches.length !== 1)
        throw new ConfigurationError(
          "SecurityGroupNotFound",
          field,
          matches.length
            ? `${matches.length} security groups in ${vpcId} are named ${n}`
            : `no security group ${n} in ${vpcId}`,
          "name existing security groups of the NLB's VPC by ID or Name tag",
        );
      return matches[0]!.GroupId!;
    });
  }
}
