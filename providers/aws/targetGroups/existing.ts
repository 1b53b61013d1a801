// A target group Portico meant to make already exists under its name: made by an earlier pass whose observation
// missed it (the tagging API's index lags behind creations, and pages over a changing account can skip one).
// ELBv2 answers CreateTargetGroup with the existing group when every setting is equal, and DuplicateTargetGroupName
// when one differs; either way the group is the Service's own if its tags say so, and is used as it is (the next
// full observation puts its settings right). Anyone else's is never taken over.
import { DescribeTagsCommand, DescribeTargetGroupsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { CloudError, ConfigurationError } from "../../errors.ts";
import type { ServiceRef } from "../../provider.ts";
import { call, type AwsClients } from "../clients.ts";
import { TAG } from "../names.ts";

export async function ownTargetGroupNamed(
  clients: AwsClients,
  name: string,
  cluster: string,
  service: ServiceRef,
): Promise<string | undefined> {
  let arn: string | undefined;
  try {
    const out = await call("elbv2:DescribeTargetGroups", () =>
      clients.elbv2.send(new DescribeTargetGroupsCommand({ Names: [name] })),
    );
    arn = out.TargetGroups?.[0]?.TargetGroupArn;
  } catch (err) {
    if (err instanceof CloudError && err.code === "TargetGroupNotFound") return undefined;
    throw err;
  }
  if (!arn) return undefined;
  const tags = await call("elbv2:DescribeTags", () =>
    clients.elbv2.send(new DescribeTagsCommand({ ResourceArns: [arn] })),
  );
  const has = new Map((tags.TagDescriptions?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
  if (has.get(TAG.cluster) !== cluster || has.get(TAG.serviceUid) !== service.uid)
    throw new ConfigurationError(
      "TargetGroupNameTaken",
      "metadata.name",
      `a target group named ${name} exists that Portico did not make for this Service`,
      "delete that target group if nothing uses it; Portico never adopts or deletes what it did not create",
    );
  return arn;
}
