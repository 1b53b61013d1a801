// Carries out the security groups' operations. The Service's own group, once made, is known to the appliers that
// follow (the load balancer's SetSecurityGroups names it); backend rules are written by backendGroups.ts, which tags
// each with the Service it is for.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  DeleteSecurityGroupCommand,
  RevokeSecurityGroupIngressCommand,
} from "@aws-sdk/client-ec2";
import { ignoreNotFound, type Appliers } from "../applying.ts";
import { call, type AwsClients } from "../clients.ts";
import type { IngressRule } from "../model.ts";
import { permissions, tags } from "../requestFields.ts";
import { authorizeBackendRules, revokeBackendRules } from "./backendGroups.ts";
import type { SecurityGroupOperation } from "./operations.ts";

export const securityGroupAppliers: Appliers<SecurityGroupOperation> = {
  async createSecurityGroup(op, s) {
    const out = await call("ec2:CreateSecurityGroup", () =>
      s.clients.ec2.send(
        new CreateSecurityGroupCommand({
          GroupName: op.group.name,
          Description: op.group.description,
          VpcId: op.group.vpcId,
          TagSpecifications: [{ ResourceType: "security-group", Tags: tags(op.group.tags) }],
        }),
      ),
    );
    s.securityGroupId = out.GroupId!;
    if (s.written) s.written.securityGroupId = s.securityGroupId;
    if (op.group.ingress.length) await authorize(s.clients, s.securityGroupId, op.group.ingress);
  },
  async authorizeIngress(op, s) {
    await authorize(s.clients, op.groupId, op.rules);
  },
  async revokeIngress(op, s) {
    await call("ec2:RevokeSecurityGroupIngress", () =>
      s.clients.ec2.send(
        new RevokeSecurityGroupIngressCommand({ GroupId: op.groupId, IpPermissions: permissions(op.rules) }),
      ),
    );
  },
  async authorizeBackendRules(op, s) {
    await authorizeBackendRules(s.clients, s.cluster, s.service, op.groupId, op.rules);
  },
  async revokeBackendRules(op, s) {
    await revokeBackendRules(
      s.clients,
      op.groupId,
      op.rules.map((r) => r.ruleId),
    );
  },
  async useSharedBackend(op, s) {
    const groups = await s.shared().apply(op.vpcIds);
    if (op.vpcId) s.sharedGroupId = groups.get(op.vpcId);
    if (s.written && s.sharedGroupId) s.written.sharedGroupId = s.sharedGroupId;
  },
  async deleteSecurityGroup(op, s) {
    await ignoreNotFound(
      call("ec2:DeleteSecurityGroup", () =>
        s.clients.ec2.send(new DeleteSecurityGroupCommand({ GroupId: op.groupId })),
      ),
    );
  },
};

async function authorize(clients: AwsClients, groupId: string, rules: IngressRule[]): Promise<void> {
  await call("ec2:AuthorizeSecurityGroupIngress", () =>
    clients.ec2.send(
      new AuthorizeSecurityGroupIngressCommand({ GroupId: groupId, IpPermissions: permissions(rules) }),
    ),
  );
}
