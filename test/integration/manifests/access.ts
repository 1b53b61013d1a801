// Installing a component's RBAC from the rendered manifests into a test's namespace, and asking the
// apiserver's own authorizer (SubjectAccessReview) what a ServiceAccount may do.
import { AuthorizationV1Api, type KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import { randomBytes } from "node:crypto";
import type { TestCluster } from "../../harness/index.ts";
import {
  apply,
  relocate,
  renderOverlay,
  serviceAccountKubeConfig,
  type Overlay,
} from "../../harness/manifests.ts";

const RBAC_KINDS = ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"];
export const VERBS = [
  "get",
  "list",
  "watch",
  "create",
  "update",
  "patch",
  "delete",
  "deletecollection",
] as const;
export type Verb = (typeof VERBS)[number];

/**
 * Creates, for real, the ServiceAccounts and RBAC objects of an overlay in the test's namespace (cluster-scoped
 * ones under names of this test's own, removed when it ends) and returns a KubeConfig that authenticates as
 * `serviceAccount` with a token the apiserver signed.
 */
export async function installRbac(
  cluster: TestCluster,
  overlay: Overlay,
  serviceAccount: string,
): Promise<KubeConfig> {
  const suffix = randomBytes(4).toString("hex");
  const objects = relocate(await renderOverlay(overlay), cluster.namespace, suffix).filter((o) =>
    RBAC_KINDS.includes(o.kind!),
  );
  const clusterScoped = objects.filter((o) => o.kind!.startsWith("Cluster"));
  cluster.defer(() => removeClusterScoped(cluster, clusterScoped));
  const failures = await apply(cluster.kubeConfig, objects, { dryRun: false });
  if (failures.length) throw new Error(`installing ${overlay} RBAC failed: ${JSON.stringify(failures)}`);
  return serviceAccountKubeConfig(cluster.kubeConfig, cluster.namespace, serviceAccount);
}

async function removeClusterScoped(cluster: TestCluster, objects: KubernetesObject[]): Promise<void> {
  for (const obj of objects) {
    const name = obj.metadata!.name!;
    const removal =
      obj.kind === "ClusterRole"
        ? cluster.rbac.deleteClusterRole({ name })
        : cluster.rbac.deleteClusterRoleBinding({ name });
    await removal.catch(() => undefined);
  }
}

export interface Grant {
  group: string;
  resource: string;
  subresource?: string;
  /** Where to ask; undefined: cluster-wide. */
  namespace?: string;
  /** One object by name (rules with resourceNames); undefined: any. */
  name?: string;
  verbs: readonly Verb[];
}

/** Every verb on every listed resource, as the authorizer answers for the ServiceAccount. */
export async function allowedVerbs(
  admin: KubeConfig,
  namespace: string,
  serviceAccount: string,
  grants: readonly Omit<Grant, "verbs">[],
): Promise<Grant[]> {
  const api = admin.makeApiClient(AuthorizationV1Api);
  return Promise.all(
    grants.map(async (g) => {
      const verbs: Verb[] = [];
      for (const verb of VERBS) {
        const review = await api.createSubjectAccessReview({
          body: {
            spec: {
              user: `system:serviceaccount:${namespace}:${serviceAccount}`,
              groups: [
                "system:serviceaccounts",
                `system:serviceaccounts:${namespace}`,
                "system:authenticated",
              ],
              resourceAttributes: {
                group: g.group,
                resource: g.resource,
                ...(g.subresource ? { subresource: g.subresource } : {}),
                ...(g.namespace ? { namespace: g.namespace } : {}),
                ...(g.name ? { name: g.name } : {}),
                verb,
              },
            },
          },
        });
        if (review.status?.allowed) verbs.push(verb);
      }
      return { ...g, verbs };
    }),
  );
}
