// Carries out the take-over: one AddTags per kind (the tags name it) and one RemoveTags for all, each taking up to
// 20 ARNs, so every tag of Portico's goes on before any of LBC's comes off. Each step is safe to repeat, and one
// interrupted between them leaves resources that observation finds as Portico's.
import { AddTagsCommand, RemoveTagsCommand, type Tag } from "@aws-sdk/client-elastic-load-balancing-v2";
import type { Appliers } from "../applying.ts";
import { call } from "../clients.ts";
import { ownershipTags } from "../names.ts";
import { ADOPTED_FROM_LBC, ADOPTED_TAG, LBC_TAG } from "./adoption.ts";
import type { TakeOverOperation } from "./operations.ts";

export const takeOverAppliers: Appliers<TakeOverOperation> = {
  async takeOverFromLbc(op, s) {
    for (const kind of ["loadbalancer", "targetgroup"] as const)
      for (const arns of inTwenties(op.resources.filter((r) => r.kind === kind).map((r) => r.arn))) {
        const tags: Tag[] = Object.entries({
          ...ownershipTags(s.cluster, s.service, kind),
          [ADOPTED_TAG]: ADOPTED_FROM_LBC,
        }).map(([Key, Value]) => ({ Key, Value }));
        await call("elbv2:AddTags", () =>
          s.clients.elbv2.send(new AddTagsCommand({ ResourceArns: arns, Tags: tags })),
        );
      }
    for (const arns of inTwenties(op.resources.map((r) => r.arn)))
      await call("elbv2:RemoveTags", () =>
        s.clients.elbv2.send(
          new RemoveTagsCommand({
            ResourceArns: arns,
            TagKeys: [LBC_TAG.cluster, LBC_TAG.serviceStack, LBC_TAG.serviceResource],
          }),
        ),
      );
  },
};

/** ELBv2's tag calls take at most 20 resource ARNs. */
function inTwenties(arns: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < arns.length; i += 20) out.push(arns.slice(i, i + 20));
  return out;
}
