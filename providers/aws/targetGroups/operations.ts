// The writes a plan makes to target groups: the groups themselves, their health checks and attributes, and the
// targets they hold. A group made in the same plan is named (its ARN is known only once it is made).
import type { DesiredTargetGroup, HealthCheck, Target } from "../model.ts";

export type TargetGroupOperation =
  | { kind: "createTargetGroup"; targetGroup: DesiredTargetGroup }
  | { kind: "modifyHealthCheck"; targetGroupArn: string; name: string; healthCheck: HealthCheck }
  | {
      kind: "modifyTargetGroupAttributes";
      targetGroupArn: string;
      name: string;
      attributes: Record<string, string>;
    }
  | { kind: "registerTargets"; targetGroupName: string; targets: Target[] }
  | { kind: "deregisterTargets"; targetGroupArn: string; name: string; targets: Target[] }
  | { kind: "deleteTargetGroup"; targetGroupArn: string; name: string };
