// What the shared cache reads from the apiserver: one list-watch per kind, each listing a page at a time and
// trimming as it comes (pagedList.ts, trim.ts), scoped to one namespace and to selected Nodes when asked.
// How they are restarted, indexed and told about is the cache's (cache.ts).
import { listPaged } from "./pagedList.ts";
import { trimEndpointSlice, trimNamespace, trimNode, trimPod, trimService } from "./trim.ts";
import { GATED_POD_LABEL } from "../readinessGates/gates.ts";
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  ListWatch,
  type KubeConfig,
  type V1EndpointSlice,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1Service,
  type Watch,
} from "@kubernetes/client-node";
import type { IPAddressPoolObject } from "../../providers/cluster.ts";

export interface SourceOptions {
  /** Services, EndpointSlices and pods of this namespace only (default: all namespaces). */
  namespace?: string;
  /** Only Nodes with these labels (server-side filtering keeps the cache small). */
  nodeLabelSelector?: string;
  /** The pods given readiness gates (labelled so by the webhook). */
  gatedPods?: boolean;
  /** Namespaces (their labels select pools and Services). */
  namespaces?: boolean;
  /** Portico's IPAddressPools. */
  pools?: boolean;
  /** MetalLB's IPAddressPools (metallb.io/v1beta1) in this namespace. */
  metallbNamespace?: string;
}

export interface Sources {
  services: ListWatch<V1Service>;
  nodes: ListWatch<V1Node>;
  endpointSlices: ListWatch<V1EndpointSlice>;
  pods?: ListWatch<V1Pod>;
  namespaces?: ListWatch<V1Namespace>;
  pools?: ListWatch<IPAddressPoolObject>;
  metallbPools?: ListWatch<IPAddressPoolObject>;
}

type PoolList = Promise<{ items: IPAddressPoolObject[]; metadata?: { resourceVersion?: string } }>;

/** The list-watches asked for, not started. */
export function cacheSources(kc: KubeConfig, watch: Watch, opts: SourceOptions): Sources {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const ns = opts.namespace;
  const nodeSelector = opts.nodeLabelSelector;
  const sources: Sources = {
    services: new ListWatch<V1Service>(
      ns ? `/api/v1/namespaces/${ns}/services` : "/api/v1/services",
      watch,
      () =>
        listPaged(
          (page) =>
            ns
              ? core.listNamespacedService({ namespace: ns, ...page })
              : core.listServiceForAllNamespaces(page),
          trimService,
        ),
      false,
    ),
    nodes: new ListWatch<V1Node>(
      "/api/v1/nodes",
      watch,
      () =>
        listPaged(
          (page) => core.listNode({ ...page, ...(nodeSelector ? { labelSelector: nodeSelector } : {}) }),
          trimNode,
        ),
      false,
      nodeSelector,
    ),
    endpointSlices: new ListWatch<V1EndpointSlice>(
      ns
        ? `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`
        : "/apis/discovery.k8s.io/v1/endpointslices",
      watch,
      () =>
        listPaged(
          (page) =>
            ns
              ? discovery.listNamespacedEndpointSlice({ namespace: ns, ...page })
              : discovery.listEndpointSliceForAllNamespaces(page),
          trimEndpointSlice,
        ),
      false,
    ),
  };
  if (opts.gatedPods) {
    sources.pods = new ListWatch<V1Pod>(
      ns ? `/api/v1/namespaces/${ns}/pods` : "/api/v1/pods",
      watch,
      () =>
        listPaged(
          (page) =>
            ns
              ? core.listNamespacedPod({ namespace: ns, labelSelector: GATED_POD_LABEL, ...page })
              : core.listPodForAllNamespaces({ labelSelector: GATED_POD_LABEL, ...page }),
          trimPod,
        ),
      false,
      GATED_POD_LABEL,
    );
  }
  if (opts.namespaces) {
    sources.namespaces = new ListWatch<V1Namespace>(
      "/api/v1/namespaces",
      watch,
      () => listPaged((page) => core.listNamespace(page), trimNamespace),
      false,
    );
  }
  if (opts.pools) {
    const custom = kc.makeApiClient(CustomObjectsApi);
    sources.pools = new ListWatch<IPAddressPoolObject>(
      "/apis/portico.io/v1alpha1/ipaddresspools",
      watch,
      () =>
        custom.listClusterCustomObject({
          group: "portico.io",
          version: "v1alpha1",
          plural: "ipaddresspools",
        }) as PoolList,
      false,
    );
    const metallbNs = opts.metallbNamespace;
    if (metallbNs !== undefined) {
      const group = { group: "metallb.io", version: "v1beta1", plural: "ipaddresspools" };
      sources.metallbPools = new ListWatch<IPAddressPoolObject>(
        `/apis/metallb.io/v1beta1/namespaces/${metallbNs}/ipaddresspools`,
        watch,
        () => custom.listNamespacedCustomObject({ ...group, namespace: metallbNs }) as PoolList,
        false,
      );
    }
  }
  return sources;
}
