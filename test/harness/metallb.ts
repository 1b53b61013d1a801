// MetalLB's own objects for the bare-metal tests: MetalLB's IPAddressPool and L2Advertisement CRDs (Portico's
// copies in manifests/metallb-compat) and Portico's L2Advertisement CRD installed once, MetalLB's objects in a
// test's own namespace (they are namespaced, so tests in parallel never see each other's), and Portico's
// cluster-scoped advertisements named after the test's namespace, removed after the test.
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

const MANIFESTS = join(import.meta.dirname, "..", "..", "manifests");
const CRDS = [
  join(MANIFESTS, "metallb-compat", "ipaddresspools.metallb.io.yaml"),
  join(MANIFESTS, "metallb-compat", "l2advertisements.metallb.io.yaml"),
  join(MANIFESTS, "base", "crds", "l2advertisements.portico.io.yaml"),
];
export const METALLB_POOLS = { group: "metallb.io", version: "v1beta1", plural: "ipaddresspools" } as const;
export const METALLB_ADS = { group: "metallb.io", version: "v1beta1", plural: "l2advertisements" } as const;
export const PORTICO_ADS = { group: "portico.io", version: "v1alpha1", plural: "l2advertisements" } as const;

export async function installAdvertisementCrds(cluster: TestCluster): Promise<void> {
  const api = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const file of CRDS) {
    const crd = loadYaml<V1CustomResourceDefinition>(readFileSync(file, "utf8"));
    await api.createCustomResourceDefinition({ body: crd }).catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
    await waitFor(`the ${crd.metadata!.name} CRD to be established`, async () => {
      const got = await api.readCustomResourceDefinition({ name: crd.metadata!.name! });
      return got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
  }
}

/** A MetalLB IPAddressPool in the test's namespace (where the test's controller and speakers read them). */
export async function createMetallbPool(
  cluster: TestCluster,
  name: string,
  spec: Record<string, unknown>,
  labels: Record<string, string> = {},
): Promise<{ status(): Promise<Record<string, unknown> | undefined>; rename(to: string): Promise<void> }> {
  const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = cluster.namespace;
  const body = (n: string) => ({
    apiVersion: "metallb.io/v1beta1",
    kind: "IPAddressPool",
    metadata: { name: n, labels },
    spec,
  });
  await api.createNamespacedCustomObject({ ...METALLB_POOLS, namespace, body: body(name) });
  let current = name;
  return {
    status: async () =>
      (
        (await api.getNamespacedCustomObject({ ...METALLB_POOLS, namespace, name: current })) as {
          status?: Record<string, unknown>;
        }
      ).status,
    // Kubernetes objects cannot be renamed: a new one, then the old one gone, as a user would do it.
    rename: async (to) => {
      await api.createNamespacedCustomObject({ ...METALLB_POOLS, namespace, body: body(to) });
      await api.deleteNamespacedCustomObject({ ...METALLB_POOLS, namespace, name: current });
      current = to;
    },
  };
}

/** A MetalLB L2Advertisement in the test's namespace; `replace` changes its spec. */
export async function createMetallbAdvertisement(
  cluster: TestCluster,
  name: string,
  spec: Record<string, unknown>,
): Promise<{ replace(spec: Record<string, unknown>): Promise<void>; remove(): Promise<void> }> {
  const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const namespace = cluster.namespace;
  await api.createNamespacedCustomObject({
    ...METALLB_ADS,
    namespace,
    body: { apiVersion: "metallb.io/v1beta1", kind: "L2Advertisement", metadata: { name }, spec },
  });
  return {
    replace: async (next) => {
      const current = (await api.getNamespacedCustomObject({ ...METALLB_ADS, namespace, name })) as object;
      await api.replaceNamespacedCustomObject({
        ...METALLB_ADS,
        namespace,
        name,
        body: { ...current, spec: next },
      });
    },
    remove: async () => {
      await api.deleteNamespacedCustomObject({ ...METALLB_ADS, namespace, name });
    },
  };
}

/**
 * A Portico L2Advertisement. Cluster-scoped: it must name its pools (ipAddressPools), since one naming none
 * would select every Portico pool of every test running at the same time. Removed after the test.
 */
export async function createPorticoAdvertisement(
  cluster: TestCluster,
  name: string,
  spec: Record<string, unknown> & { ipAddressPools: string[] },
): Promise<string> {
  const api = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const fullName = `${cluster.namespace}-${name}`;
  await api.createClusterCustomObject({
    ...PORTICO_ADS,
    body: { apiVersion: "portico.io/v1alpha1", kind: "L2Advertisement", metadata: { name: fullName }, spec },
  });
  cluster.defer(async () => {
    await api.deleteClusterCustomObject({ ...PORTICO_ADS, name: fullName }).catch(() => undefined);
  });
  return fullName;
}
