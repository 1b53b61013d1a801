// IPAddressPools for tests: the CRD from manifests/ installed once, and pools confined to one test's namespace
// (pools are cluster-wide and tests run in parallel).
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  loadYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestCluster } from "./kube.ts";
import { waitFor } from "./wait.ts";

const CRD = join(
  import.meta.dirname,
  "..",
  "..",
  "manifests",
  "base",
  "crds",
  "ipaddresspools.portico.io.yaml",
);
const POOLS = { group: "portico.io", version: "v1alpha1", plural: "ipaddresspools" } as const;

export async function installPoolCrd(cluster: TestCluster): Promise<void> {
  const api = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
  const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(CRD, "utf8"));
  await api.createCustomResourceDefinition({ body: crd }).catch((e: { code?: number }) => {
    if (e.code !== 409) throw e;
  });
  await waitFor("the IPAddressPool CRD to be established", async () => {
    const got = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
    return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
  });
}

export interface TestPool {
  name: string;
  status(): Promise<Record<string, unknown> | undefined>;
  replace(spec: Record<string, unknown>): Promise<void>;
}

/** A pool only this test's namespace may use (unless `spec.serviceAllocation` says otherwise); removed after the test. */
export async function createPool(
  cluster: TestCluster,
  name: string,
  spec: Record<string, unknown>,
): Promise<TestPool> {
  const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const fullName = `${cluster.namespace}-${name}`;
  const confined = {
    ...spec,
    serviceAllocation: { namespaces: [cluster.namespace], ...(spec.serviceAllocation as object) },
  };
  await api.createClusterCustomObject({
    ...POOLS,
    body: {
      apiVersion: "portico.io/v1alpha1",
      kind: "IPAddressPool",
      metadata: { name: fullName },
      spec: confined,
    },
  });
  cluster.defer(async () => {
    await api.deleteClusterCustomObject({ ...POOLS, name: fullName }).catch(() => undefined);
  });
  return {
    name: fullName,
    status: async () =>
      (
        (await api.getClusterCustomObject({ ...POOLS, name: fullName })) as {
          status?: Record<string, unknown>;
        }
      ).status,
    replace: async (next) => {
      const current = (await api.getClusterCustomObject({ ...POOLS, name: fullName })) as {
        metadata: object;
      };
      await api.replaceClusterCustomObject({
        ...POOLS,
        name: fullName,
        body: {
          apiVersion: "portico.io/v1alpha1",
          kind: "IPAddressPool",
          metadata: current.metadata,
          spec: {
            ...next,
            serviceAllocation: { namespaces: [cluster.namespace], ...(next.serviceAllocation as object) },
          },
        },
      });
    },
  };
}
