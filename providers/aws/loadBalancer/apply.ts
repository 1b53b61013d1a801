// Carries out the NLB's operations. The load balancer made here is the one the listeners' appliers attach to; its
// own security group is named by the ID the security groups' applier got, or left for the next pass to add when
// that group could not be made.
import {
  CreateLoadBalancerCommand,
  DeleteLoadBalancerCommand,
  ModifyLoadBalancerAttributesCommand,
  SetSecurityGroupsCommand,
  SetSubnetsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { CloudError } from "../../errors.ts";
import { ignoreNotFound, type Appliers } from "../applying.ts";
import { call } from "../clients.ts";
import { attributes, tags } from "../requestFields.ts";
import type { LoadBalancerOperation } from "./operations.ts";
import { nlbSecurityGroups } from "./plan.ts";

export const loadBalancerAppliers: Appliers<LoadBalancerOperation> = {
  async createLoadBalancer(op, s) {
    const lb = op.loadBalancer;
    // Made without its own group when that failed to be made: SetSecurityGroups adds it on the next pass.
    const groups = s.groupIds(nlbSecurityGroups(lb, s.securityGroupId)).filter((g) => g !== undefined);
    const out = await call("elbv2:CreateLoadBalancer", () =>
      s.clients.elbv2.send(
        new CreateLoadBalancerCommand({
          Name: lb.name,
          Type: "network",
          Scheme: lb.scheme,
          Subnets: lb.subnets,
          IpAddressType: lb.ipAddressType,
          ...(lb.subnetMappings
            ? {
                Subnets: undefined,
                SubnetMappings: lb.subnetMappings.map((m) => ({
                  SubnetId: m.subnetId,
                  ...(m.allocationId ? { AllocationId: m.allocationId } : {}),
                  ...(m.privateIPv4Address ? { PrivateIPv4Address: m.privateIPv4Address } : {}),
                  ...(m.ipv6Address ? { IPv6Address: m.ipv6Address } : {}),
                })),
              }
            : {}),
          ...(groups.length ? { SecurityGroups: groups } : {}),
          Tags: tags(lb.tags),
        }),
      ),
    );
    const created = out.LoadBalancers![0]!;
    if (s.written) s.written.loadBalancer = created;
    s.current = {
      arn: created.LoadBalancerArn!,
      dnsName: created.DNSName ?? "",
      state: created.State?.Code ?? "provisioning",
    };
  },
  async setSubnets(op, s) {
    await call("elbv2:SetSubnets", () =>
      s.clients.elbv2.send(new SetSubnetsCommand({ LoadBalancerArn: s.lbArn(), Subnets: op.subnets })),
    );
  },
  async setSecurityGroups(op, s) {
    const ids = s.groupIds(op.groupIds);
    if (ids.includes(undefined))
      throw new CloudError({
        operation: "elbv2:SetSecurityGroups",
        code: "SecurityGroupMissing",
        message: "the security group was not created",
        retryable: true,
      });
    await call("elbv2:SetSecurityGroups", () =>
      s.clients.elbv2.send(
        new SetSecurityGroupsCommand({
          LoadBalancerArn: s.lbArn(),
          SecurityGroups: ids as string[],
          ...(op.privateLink ? { EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic: op.privateLink } : {}),
        }),
      ),
    );
  },
  async modifyLoadBalancerAttributes(op, s) {
    await call("elbv2:ModifyLoadBalancerAttributes", () =>
      s.clients.elbv2.send(
        new ModifyLoadBalancerAttributesCommand({
          LoadBalancerArn: s.lbArn(),
          Attributes: attributes(op.attributes),
        }),
      ),
    );
  },
  async deleteLoadBalancer(op, s) {
    await ignoreNotFound(
      call("elbv2:DeleteLoadBalancer", () =>
        s.clients.elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: op.loadBalancerArn })),
      ),
    );
  },
};
