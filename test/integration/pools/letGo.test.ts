// Letting a bare-metal Service go takes back everything Portico wrote on it: its address (free for the next
// Service), the finalizer and its marker, the pool record, the ingress and every portico.io/ condition (Serving
// used to stay False after the Service became a ClusterIP). The other let-go paths are the controller's, shown
// on AWS (test/integration/aws/letGo.test.ts).
import { loadYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PORTICO_CONDITIONS, SERVING_CONDITION } from "../../../controller/status.ts";
import { expect, mergePatch, test, waitFor, type TestCluster } from "../../harness/index.ts";
import { startPortico } from "../../harness/controller.ts";
import { installCrds } from "../../harness/manifests.ts";
import { createPool, installPoolCrd } from "../../harness/pools.ts";

const METAL = "portico.io/metal";

/** The speakers' records' CRD, so the controller reads them and writes Serving (no speaker runs here). */
async function installRecordsCrd(cluster: TestCluster): Promise<void> {
  const path = join(import.meta.dirname, "../../../manifests/base/crds/servicel2statuses.portico.io.yaml");
  await installCrds(cluster.kubeConfig, [loadYaml<V1CustomResourceDefinition>(readFileSync(path, "utf8"))]);
}

test("a served Service changed to ClusterIP keeps no portico.io condition, and its address is free", async ({
  cluster,
}) => {
  await installPoolCrd(cluster);
  await installRecordsCrd(cluster);
  await createPool(cluster, "lan", { addresses: ["192.0.2.80/32"] });
  await startPortico(cluster, { provider: "metal", loadBalancerClass: METAL });
  const lb = {
    type: "LoadBalancer",
    loadBalancerClass: METAL,
    selector: { app: "x" },
    ports: [{ name: "http", protocol: "TCP", port: 80 }],
  };
  await cluster.createService("web", lb);
  // No endpoint: Serving False, NoReadyEndpoints, as the Service that kept it showed.
  const serving = await waitFor("web's Serving condition", async () =>
    (await cluster.getService("web")).status?.conditions?.find((c) => c.type === SERVING_CONDITION),
  );
  expect(serving).toMatchObject({ status: "False", reason: "NoReadyEndpoints" });
  const before = await cluster.getService("web");
  expect(before.status?.conditions?.map((c) => c.type).sort()).toEqual([...PORTICO_CONDITIONS].sort());
  expect(before.status?.loadBalancer?.ingress?.[0]?.ip).toBe("192.0.2.80");

  await cluster.core.patchNamespacedService(
    {
      name: "web",
      namespace: cluster.namespace,
      body: {
        spec: {
          type: "ClusterIP",
          loadBalancerClass: null,
          externalTrafficPolicy: null,
          allocateLoadBalancerNodePorts: null,
        },
      },
    },
    mergePatch,
  );
  const svc = await waitFor("Portico to let the Service go", async () => {
    const s = await cluster.getService("web");
    return s.metadata?.annotations?.["portico.io/managed-by"] === undefined ? s : undefined;
  });
  expect(svc.metadata?.finalizers ?? []).toEqual([]);
  expect(Object.keys(svc.metadata?.annotations ?? {}).filter((k) => k.startsWith("portico.io/"))).toEqual([]);
  expect(svc.status?.loadBalancer?.ingress ?? []).toEqual([]);
  expect((svc.status?.conditions ?? []).filter((c) => c.type.startsWith("portico.io/"))).toEqual([]);
  // The pool's one address went back: the next Service gets it.
  await cluster.createService("next", lb);
  expect(
    await waitFor(
      "next's address",
      async () => (await cluster.getService("next")).status?.loadBalancer?.ingress?.[0]?.ip,
    ),
  ).toBe("192.0.2.80");
});
