// Carries out a plan, one operation at a time, in its order. Every operation is safe to repeat: a crash at
// any point leaves tagged resources that the next observation finds and the next plan completes.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  DeleteSecurityGroupCommand,
  RevokeSecurityGroupIngressCommand,
} from "@aws-sdk/client-ec2";
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  DeleteListenerCommand,
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  DeregisterTargetsCommand,
  ModifyListenerCommand,
  ModifyLoadBalancerAttributesCommand,
  ModifyTargetGroupAttributesCommand,
  ModifyTargetGroupCommand,
  RegisterTargetsCommand,
  SetSecurityGroupsCommand,
  SetSubnetsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { CloudError } from "../errors.ts";
import type { ServiceRef } from "../provider.ts";
import { authorizeBackendRules, revokeBackendRules } from "./securityGroups/backendGroups.ts";
import { changeListenerCertificates, setListenerAttributes } from "./listeners/certificatesAndAttributes.ts";
import { call, type AwsClients } from "./clients.ts";
import { OWN_SECURITY_GROUP, type IngressRule, type Observed } from "./model.ts";
import {
  attributes,
  batches,
  healthCheckFields,
  listenerFields,
  permissions,
  tags,
  targets,
} from "./requestFields.ts";
import { nlbSecurityGroups, type Operation } from "./plan.ts";
import { DEFAULT_TG_ATTRIBUTES } from "./desired.ts";
import { ownTargetGroupNamed } from "./existingTargetGroup.ts";
import type { Written } from "./written.ts";

export interface AppliedLoadBalancer {
  arn: string;
  dnsName: string;
  state: string;
}

/** What apply needs to resolve names to ARNs: the observation the plan was made from. */
export interface ApplyContext {
  clients: AwsClients;
  observed: Observed;
  /** The Service's desired load balancer as observed, if it existed. */
  current?: AppliedLoadBalancer;
  securityGroupName: string;
  cluster: string;
  service: ServiceRef;
  /** Filled in with what was made, as the cloud answered (written.ts derives the observation after). */
  written?: Written;
}

export async function apply(ops: Operation[], ctx: ApplyContext): Promise<AppliedLoadBalancer | undefined> {
  const { clients } = ctx;
  const elb = clients.elbv2;
  const targetGroups = new Map(ctx.observed.targetGroups.map((tg) => [tg.name, tg.arn]));
  let securityGroupId = ctx.observed.securityGroups.find((g) => g.name === ctx.securityGroupName)?.id;
  let current = ctx.current;
  const lbArn = () => {
    if (!current) throw new Error("plan acts on a load balancer that was neither observed nor created");
    return current.arn;
  };
  const tgArn = (name: string) => {
    const arn = targetGroups.get(name);
    if (!arn) throw new Error(`plan uses target group ${name} that was neither observed nor created`);
    return arn;
  };

  for (const op of ops) {
    switch (op.kind) {
      case "createSecurityGroup": {
        const out = await call("ec2:CreateSecurityGroup", () =>
          clients.ec2.send(
            new CreateSecurityGroupCommand({
              GroupName: op.group.name,
              Description: op.group.description,
              VpcId: op.group.vpcId,
              TagSpecifications: [{ ResourceType: "security-group", Tags: tags(op.group.tags) }],
            }),
          ),
        );
        securityGroupId = out.GroupId!;
        if (ctx.written) ctx.written.securityGroupId = securityGroupId;
        if (op.group.ingress.length) await authorize(clients, securityGroupId, op.group.ingress);
        break;
      }
      case "authorizeIngress":
        await authorize(clients, op.groupId, op.rules);
        break;
      case "revokeIngress":
        await call("ec2:RevokeSecurityGroupIngress", () =>
          clients.ec2.send(
            new RevokeSecurityGroupIngressCommand({
              GroupId: op.groupId,
              IpPermissions: permissions(op.rules),
            }),
          ),
        );
        break;
      case "createLoadBalancer": {
        const lb = op.loadBalancer;
        // Made without its own group when that failed to be made: SetSecurityGroups adds it on the next pass.
        const groups = nlbSecurityGroups(lb, securityGroupId).filter((g) => g !== OWN_SECURITY_GROUP);
        const out = await call("elbv2:CreateLoadBalancer", () =>
          elb.send(
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
        if (ctx.written) ctx.written.loadBalancer = created;
        current = {
          arn: created.LoadBalancerArn!,
          dnsName: created.DNSName ?? "",
          state: created.State?.Code ?? "provisioning",
        };
        break;
      }
      case "setSubnets":
        await call("elbv2:SetSubnets", () =>
          elb.send(new SetSubnetsCommand({ LoadBalancerArn: lbArn(), Subnets: op.subnets })),
        );
        break;
      case "setSecurityGroups":
        if (op.groupIds.includes(OWN_SECURITY_GROUP) && !securityGroupId)
          throw new CloudError({
            operation: "elbv2:SetSecurityGroups",
            code: "SecurityGroupMissing",
            message: "the security group was not created",
            retryable: true,
          });
        await call("elbv2:SetSecurityGroups", () =>
          elb.send(
            new SetSecurityGroupsCommand({
              LoadBalancerArn: lbArn(),
              SecurityGroups: op.groupIds.map((g) => (g === OWN_SECURITY_GROUP ? securityGroupId! : g)),
              ...(op.privateLink
                ? { EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic: op.privateLink }
                : {}),
            }),
          ),
        );
        break;
      case "authorizeBackendRules":
        await authorizeBackendRules(clients, ctx.cluster, ctx.service, op.groupId, op.rules);
        break;
      case "revokeBackendRules":
        await revokeBackendRules(
          clients,
          op.groupId,
          op.rules.map((r) => r.ruleId),
        );
        break;
      case "addListenerCertificates":
      case "removeListenerCertificates":
        await changeListenerCertificates(clients, op.kind, op.listenerArn, op.certificateArns);
        break;
      case "modifyListenerAttributes":
        await setListenerAttributes(clients, op.listenerArn, op.attributes);
        break;
      case "modifyLoadBalancerAttributes":
        await call("elbv2:ModifyLoadBalancerAttributes", () =>
          elb.send(
            new ModifyLoadBalancerAttributesCommand({
              LoadBalancerArn: lbArn(),
              Attributes: attributes(op.attributes),
            }),
          ),
        );
        break;
      case "createTargetGroup": {
        const tg = op.targetGroup;
        const out = await call("elbv2:CreateTargetGroup", () =>
          elb.send(
            new CreateTargetGroupCommand({
              Name: tg.name,
              Protocol: tg.protocol,
              Port: tg.port,
              VpcId: tg.vpcId,
              TargetType: tg.targetType,
              ...(tg.ipAddressType ? { IpAddressType: tg.ipAddressType } : {}),
              ...healthCheckFields(tg.healthCheck),
              Tags: tags(tg.tags),
            }),
          ),
        ).catch(async (err: unknown) => {
          if (!(err instanceof CloudError && err.code === "DuplicateTargetGroupName")) throw err;
          const existing = await ownTargetGroupNamed(clients, tg.name, ctx.cluster, ctx.service);
          if (!existing) throw err;
          return { TargetGroups: [{ TargetGroupArn: existing }] };
        });
        const arn = out.TargetGroups![0]!.TargetGroupArn!;
        targetGroups.set(tg.name, arn);
        ctx.written?.targetGroups.set(tg.name, out.TargetGroups![0]!);
        // A new group has ELBv2's defaults already: only the others are set.
        const differ = Object.fromEntries(
          Object.entries(tg.attributes).filter(([k, v]) => DEFAULT_TG_ATTRIBUTES[k] !== v),
        );
        if (Object.keys(differ).length)
          await call("elbv2:ModifyTargetGroupAttributes", () =>
            elb.send(
              new ModifyTargetGroupAttributesCommand({ TargetGroupArn: arn, Attributes: attributes(differ) }),
            ),
          );
        break;
      }
      case "modifyHealthCheck":
        await call("elbv2:ModifyTargetGroup", () =>
          elb.send(
            new ModifyTargetGroupCommand({
              TargetGroupArn: op.targetGroupArn,
              ...healthCheckFields(op.healthCheck),
            }),
          ),
        );
        break;
      case "modifyTargetGroupAttributes":
        await call("elbv2:ModifyTargetGroupAttributes", () =>
          elb.send(
            new ModifyTargetGroupAttributesCommand({
              TargetGroupArn: op.targetGroupArn,
              Attributes: attributes(op.attributes),
            }),
          ),
        );
        break;
      case "registerTargets":
        for (const batch of batches(op.targets)) {
          await call("elbv2:RegisterTargets", () =>
            elb.send(
              new RegisterTargetsCommand({
                TargetGroupArn: tgArn(op.targetGroupName),
                Targets: targets(batch),
              }),
            ),
          );
        }
        break;
      case "deregisterTargets":
        for (const batch of batches(op.targets)) {
          await call("elbv2:DeregisterTargets", () =>
            elb.send(
              new DeregisterTargetsCommand({ TargetGroupArn: op.targetGroupArn, Targets: targets(batch) }),
            ),
          );
        }
        break;
      case "createListener": {
        const out = await call("elbv2:CreateListener", () =>
          elb.send(
            new CreateListenerCommand({
              LoadBalancerArn: lbArn(),
              Port: op.listener.port,
              ...listenerFields(op.listener, tgArn(op.listener.targetGroupName)),
            }),
          ),
        );
        const listenerArn = out.Listeners![0]!.ListenerArn!;
        ctx.written?.listeners.set(op.listener.port, listenerArn);
        const extra = op.listener.certificateArns.slice(1);
        if (extra.length)
          await changeListenerCertificates(clients, "addListenerCertificates", listenerArn, extra);
        if (Object.keys(op.listener.attributes).length)
          await setListenerAttributes(clients, listenerArn, op.listener.attributes);
        break;
      }
      case "modifyListener": {
        // ModifyListener keeps what a request leaves out, so the protocol is named only when it changes: moving
        // a listener to another target group (a new node port, another target type) says only that, which
        // every implementation of the API takes (moto 5.2.5 refuses any request naming UDP, TCP_UDP or TLS).
        const { Protocol, ...fields } = listenerFields(op.listener, tgArn(op.listener.targetGroupName));
        await call("elbv2:ModifyListener", () =>
          elb.send(
            new ModifyListenerCommand({
              ListenerArn: op.listenerArn,
              Port: op.listener.port,
              ...(Protocol !== op.protocolNow ? { Protocol } : {}),
              ...fields,
            }),
          ),
        );
        break;
      }
      case "deleteListener":
        await ignoreNotFound(
          call("elbv2:DeleteListener", () =>
            elb.send(new DeleteListenerCommand({ ListenerArn: op.listenerArn })),
          ),
        );
        break;
      case "deleteTargetGroup":
        await ignoreNotFound(
          call("elbv2:DeleteTargetGroup", () =>
            elb.send(new DeleteTargetGroupCommand({ TargetGroupArn: op.targetGroupArn })),
          ),
        );
        break;
      case "deleteLoadBalancer":
        await ignoreNotFound(
          call("elbv2:DeleteLoadBalancer", () =>
            elb.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: op.loadBalancerArn })),
          ),
        );
        break;
      case "deleteSecurityGroup":
        await ignoreNotFound(
          call("ec2:DeleteSecurityGroup", () =>
            clients.ec2.send(new DeleteSecurityGroupCommand({ GroupId: op.groupId })),
          ),
        );
        break;
    }
  }
  return current;
}

async function authorize(clients: AwsClients, groupId: string, rules: IngressRule[]): Promise<void> {
  await call("ec2:AuthorizeSecurityGroupIngress", () =>
    clients.ec2.send(
      new AuthorizeSecurityGroupIngressCommand({ GroupId: groupId, IpPermissions: permissions(rules) }),
    ),
  );
}

/** Deleting what is already gone is success: deletion is idempotent. */
async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CloudError && /NotFound$/.test(err.code)) return;
    throw err;
  }
}
