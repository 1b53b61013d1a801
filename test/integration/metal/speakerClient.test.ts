// The speaker's own Kubernetes client against the real apiserver: lists in pages with real continue tokens,
// watches from the list's version, trims what it keeps, and tells a missing kind by its 404. (A 410 needs an
// etcd compaction, which a test cannot bring about on demand: the unit tests cover that path.)
import type { V1ConfigMap } from "@kubernetes/client-node";
import { KubeApiError, resourcePath } from "../../../speaker/kube/api/client.ts";
import { ListWatch } from "../../../speaker/kube/api/listWatch.ts";
import { expect, mergePatch, test, waitFor } from "../../harness/index.ts";
import { speakerApi } from "../../harness/speakerApi.ts";

test("a list-watch lists page by page, then follows creations, changes and deletions, keeping trimmed objects", async ({
  cluster,
}) => {
  const ns = cluster.namespace;
  const create = (name: string) =>
    cluster.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name, labels: { app: "lw" } }, data: { key: name } },
    });
  for (const name of ["a", "b", "c", "d", "e"]) await create(name);
  const api = speakerApi(cluster.kubeConfig);
  const lw = new ListWatch<V1ConfigMap>(
    api,
    resourcePath({ group: "", version: "v1", plural: "configmaps", namespace: ns }),
    {
      labelSelector: "app=lw",
      pageSize: 2,
      trim: (cm) => delete cm.metadata!.managedFields,
    },
  );
  const seen: string[] = [];
  lw.on("add", (cm) => seen.push(`add ${cm.metadata!.name}`));
  lw.on("update", (cm) => seen.push(`update ${cm.metadata!.name}=${cm.data!.key}`));
  lw.on("delete", (cm) => seen.push(`delete ${cm.metadata!.name}`));
  const errors: unknown[] = [];
  lw.on("error", (err) => errors.push(err));
  cluster.defer(() => lw.stop());
  await lw.start();
  expect(
    lw
      .list()
      .map((cm) => cm.metadata!.name)
      .sort(),
  ).toEqual(["a", "b", "c", "d", "e"]);
  expect(lw.list().every((cm) => cm.metadata!.managedFields === undefined)).toBe(true);

  seen.length = 0;
  await create("f");
  await cluster.core.patchNamespacedConfigMap(
    { name: "a", namespace: ns, body: { data: { key: "changed" } } },
    mergePatch,
  );
  await cluster.core.deleteNamespacedConfigMap({ name: "b", namespace: ns });
  await cluster.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "unlabelled" } } });
  await waitFor("the list-watch to follow", () => (seen.length >= 3 ? true : undefined));
  expect(seen).toEqual(["add f", "update a=changed", "delete b"]);
  expect(lw.get("a", ns)?.data).toEqual({ key: "changed" });
  expect(lw.get("unlabelled", ns)).toBeUndefined();
  expect(errors).toEqual([]);
});

test("a kind that is not installed is a 404 the caller can tell from other failures", async ({ cluster }) => {
  const api = speakerApi(cluster.kubeConfig);
  const missing = await api.get("/apis/nowhere.example.com/v1/things").catch((err: unknown) => err);
  expect(missing).toBeInstanceOf(KubeApiError);
  expect((missing as KubeApiError).code).toBe(404);
});
