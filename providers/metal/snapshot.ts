// The bare-metal provider on a one-off snapshot of the cluster, for porticoctl plan and migrate: what the
// controller would allocate, computed by the same allocator from the pools, Services and Nodes listed once.
import { CustomObjectsApi, type CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { METAL_LOAD_BALANCER_CLASS } from "../classes.ts";
import type { ClusterView } from "../cluster.ts";
import type { LoadBalancerProvider } from "../provider.ts";
import { metalInventory } from "./inventory.ts";
import { MetalProvider } from "./provider.ts";

/**
 * The bare-metal provider on a list-only snapshot of the cluster: Portico's pools and MetalLB's (none where its CRD
 * is not installed), the Services and the Nodes. `defaultForUnclassed`: as a controller serving unclassed Services.
 */
export async function snapshotPlanner(
  kc: KubeConfig,
  core: CoreV1Api,
  opts: { defaultForUnclassed?: boolean } = {},
): Promise<LoadBalancerProvider> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = async (group: string, version: string) =>
    (
      (await custom.listClusterCustomObject({ group, version, plural: "ipaddresspools" })) as {
        items: { metadata: { name: string; namespace?: string }; spec: unknown }[];
      }
    ).items;
  const pools = await list("portico.io", "v1alpha1");
  const metallbPools = await list("metallb.io", "v1beta1").catch(() => []);
  const services = (await core.listServiceForAllNamespaces()).items;
  const nodes = (await core.listNode()).items;
  const snapshot: ClusterView = {
    pools: { list: () => pools },
    metallbPoolList: () => metallbPools,
    services: { list: () => services },
    nodes: { list: () => nodes },
  };
  return new MetalProvider(
    metalInventory(snapshot, {
      loadBalancerClass: METAL_LOAD_BALANCER_CLASS,
      defaultForUnclassed: opts.defaultForUnclassed ?? false,
    }),
  );
}
