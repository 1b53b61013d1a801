// Whether a DaemonSet's current pod template still places a pod on a node, as the scheduler reads a template's
// node constraints: its nodeSelector, and its required node affinity (terms ORed, each term's requirements ANDed;
// In, NotIn, Exists, DoesNotExist, Gt, Lt on labels, and matchFields on metadata.name). A rolling update that
// changes these can take the speaker off a node: that pod is not replaced in place, however its generation reads.
// Taints are left out: the DaemonSet tolerates those a leaving node gets, and a node that is leaving is told apart
// before this is asked (replacement.ts).
import type { V1DaemonSet, V1Node, V1NodeSelectorRequirement } from "@kubernetes/client-node";

export function templatePlacesOn(daemonSet: V1DaemonSet, node: V1Node): boolean {
  const spec = daemonSet.spec?.template.spec;
  const labels = node.metadata?.labels ?? {};
  for (const [key, value] of Object.entries(spec?.nodeSelector ?? {}))
    if (labels[key] !== value) return false;
  const terms =
    spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.length) return true;
  const fields: Record<string, string> = { "metadata.name": node.metadata?.name ?? "" };
  return terms.some(
    (term) =>
      // A term with no requirement matches nothing, as in the scheduler.
      (term.matchExpressions?.length ?? 0) + (term.matchFields?.length ?? 0) > 0 &&
      (term.matchExpressions ?? []).every((r) => holds(r, labels)) &&
      (term.matchFields ?? []).every((r) => holds(r, fields)),
  );
}

function holds(requirement: V1NodeSelectorRequirement, values: Record<string, string>): boolean {
  const present = Object.hasOwn(values, requirement.key);
  const value = values[requirement.key];
  const wanted = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return present && wanted.includes(value!);
    case "NotIn":
      return !present || !wanted.includes(value!);
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
    case "Gt":
    case "Lt": {
      const [have, bound] = [Number.parseInt(value ?? "", 10), Number.parseInt(wanted[0] ?? "", 10)];
      if (!present || Number.isNaN(have) || Number.isNaN(bound)) return false;
      return requirement.operator === "Gt" ? have > bound : have < bound;
    }
    default:
      return false;
  }
}
