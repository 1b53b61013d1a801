// Where the doctor takes a Service's target type from: the provider's own settings code (the same `targetType`
// the controller's provider answers with), through the intent the controller would build, so that doctor never
// says "ip targets" of a Service the controller serves with instance targets, or a path for one it refuses.
import type { V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import { METAL_LOAD_BALANCER_CLASS } from "../../providers/classes.ts";
import { ConfigurationError } from "../../providers/errors.ts";
import { buildIntent } from "../intent.ts";
import { parseLabelSelector } from "../../shared/labelSelector.ts";
import type { TargetJudgement } from "./doctorTraffic.ts";
import { classOf } from "./serviceClass.ts";
import { inspectionHint, inspectorFor, type ToolAccess } from "../../providers/registry.ts";

export async function judgeTargets(
  svc: V1Service,
  nodes: readonly V1Node[],
  slices: readonly V1EndpointSlice[],
  where: { clusterName: string | undefined; access: ToolAccess; nodeSelector?: string },
): Promise<TargetJudgement> {
  const cls = classOf(svc);
  try {
    const nodeSelector = where.nodeSelector ? parseLabelSelector(where.nodeSelector) : undefined;
    const intent = cls
      ? buildIntent(svc, nodes, slices, cls, nodeSelector ? { nodeSelector } : {})
      : undefined;
    // Bare metal: traffic always enters through the announcing node's kube-proxy.
    if (cls === METAL_LOAD_BALANCER_CLASS) return { type: "instance" };
    const provider = await inspectorFor(cls, where.clusterName ?? "", where.access);
    if (!intent || !provider?.targetType)
      return { unknown: inspectionHint(cls, where.access) ?? "no provider serves the Service's class" };
    return { type: provider.targetType(intent) };
  } catch (err) {
    if (err instanceof ConfigurationError) return { refused: { message: err.message, fix: err.fix } };
    throw err;
  }
}
