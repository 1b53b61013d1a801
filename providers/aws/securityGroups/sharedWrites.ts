// The writes to the cluster's shared backend group and its range rules (sharedBackend.ts decides them): made, found
// again when an earlier run made it under the same name, admitted on a target's group, revoked, deleted. Each answers
// what the cloud said, so the shared backend keeps its copy of the rules without reading them again.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  DeleteSecurityGroupCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
} from "@aws-sdk/client-ec2";
import { CloudError } from "../../errors.ts";
import { call, type AwsClients } from "../clients.ts";
import { TAG } from "../names.ts";
import type { ObservedRange, PortRange } from "./backendRanges.ts";

export const SHARED_GROUP_RESOURCE = "shared-backend-group";
export const RANGE_RULE_RESOURCE = "backend-range";

/** The shared group of a VPC, made (or, made by an earlier run whose tags did not land, found by its name). */
export async function createSharedGroup(
  clients: AwsClients,
  cluster: string,
  vpcId: string,
  name: string,
): Promise<{ groupId: string; made: boolean }> {
  try {
    const out = await call("ec2:CreateSecurityGroup", () =>
      clients.ec2.send(
        new CreateSecurityGroupCommand({
          GroupName: name,
          Description: `Portico: shared by the NLBs of cluster ${cluster}; their targets admit it`,
          VpcId: vpcId,
          TagSpecifications: [{ ResourceType: "security-group", Tags: tags(cluster, SHARED_GROUP_RESOURCE) }],
        }),
      ),
    );
    return { groupId: out.GroupId!, made: true };
  } catch (err) {
    // The name is this cluster's in this VPC alone.
    if (!(err instanceof CloudError && err.code === "InvalidGroup.Duplicate")) throw err;
    const out = await call("ec2:DescribeSecurityGroups", () =>
      clients.ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [
            { Name: "group-name", Values: [name] },
            { Name: "vpc-id", Values: [vpcId] },
          ],
        }),
      ),
    );
    const id = out.SecurityGroups?.[0]?.GroupId;
    if (!id) throw err;
    return { groupId: id, made: false };
  }
}

/**
 * A target's group admits the shared group on a range of ports. Returns the new rule's ID, or undefined when the
 * same rule was there already (ours, made by a run that did not see it through).
 */
export async function admitShared(
  clients: AwsClients,
  cluster: string,
  groupId: string,
  r: PortRange,
): Promise<string | undefined> {
  try {
    const out = await call("ec2:AuthorizeSecurityGroupIngress", () =>
      clients.ec2.send(
        new AuthorizeSecurityGroupIngressCommand({
          GroupId: r.groupId,
          IpPermissions: [
            {
              IpProtocol: r.protocol,
              FromPort: r.from,
              ToPort: r.to,
              UserIdGroupPairs: [
                { GroupId: groupId, Description: `portico: NLBs of cluster ${cluster}`.slice(0, 255) },
              ],
            },
          ],
          TagSpecifications: [
            { ResourceType: "security-group-rule", Tags: tags(cluster, RANGE_RULE_RESOURCE) },
          ],
        }),
      ),
    );
    return out.SecurityGroupRules?.[0]?.SecurityGroupRuleId;
  } catch (err) {
    if (!(err instanceof CloudError && err.code === "InvalidPermission.Duplicate")) throw err;
    return undefined;
  }
}

export async function revokeShared(clients: AwsClients, r: ObservedRange): Promise<void> {
  try {
    await call("ec2:RevokeSecurityGroupIngress", () =>
      clients.ec2.send(
        new RevokeSecurityGroupIngressCommand({ GroupId: r.groupId, SecurityGroupRuleIds: [r.ruleId] }),
      ),
    );
  } catch (err) {
    // Revoked by hand, or its group deleted: nothing left to revoke.
    if (!(err instanceof CloudError && /NotFound$/.test(err.code))) throw err;
  }
}

/** True when the group went; false while a load balancer being deleted still holds it (or it is gone already). */
export async function deleteSharedGroup(clients: AwsClients, groupId: string): Promise<boolean> {
  try {
    await call("ec2:DeleteSecurityGroup", () =>
      clients.ec2.send(new DeleteSecurityGroupCommand({ GroupId: groupId })),
    );
    return true;
  } catch (err) {
    if (err instanceof CloudError && (err.code === "DependencyViolation" || /NotFound$/.test(err.code)))
      return false;
    throw err;
  }
}

function tags(cluster: string, resource: string) {
  return [
    { Key: TAG.cluster, Value: cluster },
    { Key: TAG.resource, Value: resource },
  ];
}
