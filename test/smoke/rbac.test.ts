import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect, test } from "../harness/index.ts";

/** A client that authenticates as `serviceAccount` with a token the apiserver itself signed. */
async function clientAs(admin: KubeConfig, namespace: string, serviceAccount: string): Promise<CoreV1Api> {
  const core = admin.makeApiClient(CoreV1Api);
  const token = await core.createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace,
    body: { spec: { audiences: ["https://kubernetes.default.svc"], expirationSeconds: 600 } },
  });
  const kc = new KubeConfig();
  const cluster = admin.getCurrentCluster()!;
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: serviceAccount, token: token.status!.token }],
    contexts: [{ name: "sa", cluster: cluster.name, user: serviceAccount }],
    currentContext: "sa",
  });
  return kc.makeApiClient(CoreV1Api);
}

test("RBAC is enforced: a ServiceAccount may do what its Role grants and nothing more", async ({
  cluster,
}) => {
  const ns = cluster.namespace;
  await cluster.core.createNamespacedServiceAccount({
    namespace: ns,
    body: { metadata: { name: "reader" } },
  });
  await cluster.rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: { name: "service-reader" },
      rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "list", "watch"] }],
    },
  });
  await cluster.rbac.createNamespacedRoleBinding({
    namespace: ns,
    body: {
      metadata: { name: "reader-reads-services" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "service-reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: ns }],
    },
  });
  await cluster.createService("web", { type: "ClusterIP", ports: [{ port: 80 }] });

  const reader = await clientAs(cluster.kubeConfig, ns, "reader");
  const listed = await reader.listNamespacedService({ namespace: ns });
  expect(listed.items.map((s) => s.metadata!.name)).toEqual(["web"]);

  const refusals = await Promise.all([
    reader.deleteNamespacedService({ name: "web", namespace: ns }).then(
      () => 0,
      (e: { code?: number }) => e.code,
    ),
    reader.listNamespacedSecret({ namespace: ns }).then(
      () => 0,
      (e: { code?: number }) => e.code,
    ),
    reader.listNamespacedService({ namespace: "default" }).then(
      () => 0,
      (e: { code?: number }) => e.code,
    ),
  ]);
  expect(refusals).toEqual([403, 403, 403]);
  // The refused delete really did nothing.
  expect((await cluster.getService("web")).metadata!.name).toBe("web");
});
