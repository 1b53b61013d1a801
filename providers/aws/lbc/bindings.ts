// The AWS Load Balancer Controller's TargetGroupBindings, for `porticoctl migrate`: LBC's own objects, which
// Portico leaves as they are and mentions. A running LBC registers and deregisters targets by them, also in target
// groups Portico has taken over, so they must go with LBC.
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";

/** The parts of a TargetGroupBinding (elbv2.k8s.aws/v1beta1) read here. */
export interface TargetGroupBinding {
  metadata?: { name?: string; namespace?: string };
  spec?: { serviceRef?: { name?: string }; targetGroupARN?: string };
}

/** What migrate says of the Service's TargetGroupBindings. */
export function bindingLines(all: readonly TargetGroupBinding[], service: string): string[] {
  return all
    .filter((b) => b.spec?.serviceRef?.name === service)
    .map(
      (b) =>
        `keep TargetGroupBinding ${b.metadata?.namespace}/${b.metadata?.name} as it is (the AWS Load Balancer Controller's, for ${b.spec?.targetGroupARN ?? "no target group"}): delete it once LBC is gone (remove its finalizer elbv2.k8s.aws/resources first), or a running LBC would change the targets of a group Portico owns`,
    );
}

/** LBC's TargetGroupBindings in a namespace; none where its CRD is not installed or may not be read. */
async function lbcBindings(custom: CustomObjectsApi, namespace: string): Promise<TargetGroupBinding[]> {
  try {
    const list = (await custom.listNamespacedCustomObject({
      group: "elbv2.k8s.aws",
      version: "v1beta1",
      namespace,
      plural: "targetgroupbindings",
    })) as { items?: TargetGroupBinding[] };
    return list.items ?? [];
  } catch {
    return [];
  }
}

/** A reader of the bindings' lines, each namespace listed once however many of its Services are asked about. */
export function bindingNotes(kc: KubeConfig): (namespace: string, service: string) => Promise<string[]> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const byNamespace = new Map<string, Promise<TargetGroupBinding[]>>();
  return async (namespace, service) => {
    if (!byNamespace.has(namespace)) byNamespace.set(namespace, lbcBindings(custom, namespace));
    return bindingLines(await byNamespace.get(namespace)!, service);
  };
}
