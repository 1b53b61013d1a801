// Carries out the target groups' operations. A group made here is known by name to the listeners' appliers that
// follow; one that already exists under its name is used when it is the Service's own (existing.ts).
import {
  CreateTargetGroupCommand,
  DeleteTargetGroupCommand,
  DeregisterTargetsCommand,
  ModifyTargetGroupAttributesCommand,
  ModifyTargetGroupCommand,
  RegisterTargetsCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { CloudError } from "../../errors.ts";
import { ignoreNotFound, type Appliers } from "../applying.ts";
import { call } from "../clients.ts";
import { attributes, batches, healthCheckFields, tags, targets } from "../requestFields.ts";
import { DEFAULT_TG_ATTRIBUTES } from "./desired.ts";
import { ownTargetGroupNamed } from "./existing.ts";
import type { TargetGroupOperation } from "./operations.ts";

export const targetGroupAppliers: Appliers<TargetGroupOperation> = {
  async createTargetGroup(op, s) {
    const tg = op.targetGroup;
    const out = await call("elbv2:CreateTargetGroup", () =>
      s.clients.elbv2.send(
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
      const existing = await ownTargetGroupNamed(s.clients, tg.name, s.cluster, s.service);
      if (!existing) throw err;
      return { TargetGroups: [{ TargetGroupArn: existing }] };
    });
    const arn = out.TargetGroups![0]!.TargetGroupArn!;
    s.targetGroups.set(tg.name, arn);
    s.written?.targetGroups.set(tg.name, out.TargetGroups![0]!);
    // A new group has ELBv2's defaults already: only the others are set.
    const differ = Object.fromEntries(
      Object.entries(tg.attributes).filter(([k, v]) => DEFAULT_TG_ATTRIBUTES[k] !== v),
    );
    if (Object.keys(differ).length)
      await call("elbv2:ModifyTargetGroupAttributes", () =>
        s.clients.elbv2.send(
          new ModifyTargetGroupAttributesCommand({ TargetGroupArn: arn, Attributes: attributes(differ) }),
        ),
      );
  },
  async modifyHealthCheck(op, s) {
    await call("elbv2:ModifyTargetGroup", () =>
      s.clients.elbv2.send(
        new ModifyTargetGroupCommand({
          TargetGroupArn: op.targetGroupArn,
          ...healthCheckFields(op.healthCheck),
        }),
      ),
    );
  },
  async modifyTargetGroupAttributes(op, s) {
    await call("elbv2:ModifyTargetGroupAttributes", () =>
      s.clients.elbv2.send(
        new ModifyTargetGroupAttributesCommand({
          TargetGroupArn: op.targetGroupArn,
          Attributes: attributes(op.attributes),
        }),
      ),
    );
  },
  async registerTargets(op, s) {
    for (const batch of batches(op.targets))
      await call("elbv2:RegisterTargets", () =>
        s.clients.elbv2.send(
          new RegisterTargetsCommand({
            TargetGroupArn: s.tgArn(op.targetGroupName),
            Targets: targets(batch),
          }),
        ),
      );
  },
  async deregisterTargets(op, s) {
    for (const batch of batches(op.targets))
      await call("elbv2:DeregisterTargets", () =>
        s.clients.elbv2.send(
          new DeregisterTargetsCommand({ TargetGroupArn: op.targetGroupArn, Targets: targets(batch) }),
        ),
      );
  },
  async deleteTargetGroup(op, s) {
    await ignoreNotFound(
      call("elbv2:DeleteTargetGroup", () =>
        s.clients.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: op.targetGroupArn })),
      ),
    );
  },
};
