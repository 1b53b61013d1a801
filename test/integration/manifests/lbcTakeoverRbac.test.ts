// manifests/aws/lbc-takeover-rbac.yaml, applied to the real apiserver: the controller's ServiceAccount may get the
// AWS Load Balancer Controller's leader Lease in kube-system (to refuse while it runs), and nothing else there.
import { loadAllYaml, type KubernetesObject, type V1RoleBinding } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "../../harness/index.ts";
import { apply, MANIFESTS } from "../../harness/manifests.ts";
import { allowedVerbs } from "./access.ts";

test("the take-over RBAC grants get on LBC's leader Lease only", async ({ cluster }) => {
  const suffix = randomBytes(4).toString("hex");
  const objects = loadAllYaml(
    readFileSync(join(MANIFESTS, "aws", "lbc-takeover-rbac.yaml"), "utf8"),
  ) as KubernetesObject[];
  expect(objects.map((o) => `${o.kind}/${o.metadata?.namespace}`)).toEqual([
    "Role/kube-system",
    "RoleBinding/kube-system",
  ]);
  // Names of this test's own in kube-system, bound to a ServiceAccount of the test's namespace.
  for (const obj of objects) obj.metadata!.name = `${obj.metadata!.name}-${suffix}`;
  const binding = objects[1] as V1RoleBinding;
  binding.roleRef.name = objects[0]!.metadata!.name!;
  binding.subjects = binding.subjects!.map((s) => ({ ...s, namespace: cluster.namespace }));
  cluster.defer(async () => {
    await cluster.rbac.deleteNamespacedRoleBinding({
      name: binding.metadata!.name!,
      namespace: "kube-system",
    });
    await cluster.rbac.deleteNamespacedRole({ name: objects[0]!.metadata!.name!, namespace: "kube-system" });
  });
  expect(await apply(cluster.kubeConfig, objects, { dryRun: false })).toEqual([]);
  const lease = { group: "coordination.k8s.io", resource: "leases", namespace: "kube-system" };
  const grants = await allowedVerbs(cluster.kubeConfig, cluster.namespace, "portico-controller", [
    { ...lease, name: "aws-load-balancer-controller-leader" },
    { ...lease, name: "kube-controller-manager" },
  ]);
  expect(grants.map((g) => g.verbs)).toEqual([["get"], []]);
});
