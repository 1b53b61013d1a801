// Portico's own `portico.io/` Service annotations: each spelled and described here once. Which provider honours
// which is the provider's to say (its annotations catalog, providers/<name>/annotations/catalog.ts), and the
// registry assembles the family from them; a key under the prefix that no provider lists is a typo and refused.
import { POOL_RECORD_ANNOTATION } from "../../shared/request.ts";
import type { KeyEntry, ProviderKeyFamily } from "./types.ts";

/** Portico's own keys the providers read, spelled here once. */
export const PORTICO_ANNOTATIONS = {
  managedBy: "portico.io/managed-by",
  targetNodeLabels: "portico.io/target-node-labels",
  kubeProxyHealthCheck: "portico.io/health-check-kube-proxy",
  targetType: "portico.io/target-type",
  floatingIP: "portico.io/floating-ip",
} as const;

/**
 * Target-node selectors: Portico's own key, and the one users already write for the AWS Load Balancer Controller
 * (the same string as the AWS catalog's targetNodeLabels key; a unit test holds them equal).
 */
export const TARGET_NODE_LABEL_ANNOTATIONS = [
  PORTICO_ANNOTATIONS.targetNodeLabels,
  "service.beta.kubernetes.io/aws-load-balancer-target-node-labels",
];

const implemented = (key: string, summary: string): KeyEntry => ({ key, status: "implemented", summary });

/** Every `portico.io/` key a provider may honour, with what it does. */
export const PORTICO_ENTRIES = {
  poolRecord: implemented(
    POOL_RECORD_ANNOTATION,
    "written by Portico on bare-metal Services: the pool each address came from (two, comma-separated, in ingress order, for a dual-stack Service served by two pools), read by the speakers to choose between overlapping pools",
  ),
  targetNodeLabels: implemented(
    PORTICO_ANNOTATIONS.targetNodeLabels,
    "only nodes matching this label selector are targets",
  ),
  kubeProxyHealthCheck: implemented(
    PORTICO_ANNOTATIONS.kubeProxyHealthCheck,
    "with externalTrafficPolicy Cluster, health-check kube-proxy's :10256/healthz",
  ),
  targetType: implemented(
    PORTICO_ANNOTATIONS.targetType,
    "instance (node IPs, the default) or ip (pod IPs) backends",
  ),
  floatingIP: implemented(
    PORTICO_ANNOTATIONS.floatingIP,
    "floating IP (direct server return) on the Service's rules",
  ),
  loadBalancerIPs: implemented("portico.io/loadBalancerIPs", "the address(es) to use, one per family"),
  addressPool: implemented("portico.io/address-pool", "the pool to take the address from"),
  allowSharedIp: implemented(
    "portico.io/allow-shared-ip",
    "Services with the same key share an address when their ports differ",
  ),
} as const satisfies Record<string, KeyEntry>;

/** The family's own part: what every provider honours. Provider-specific keys are added by the registry. */
export const PORTICO_FAMILY: ProviderKeyFamily = {
  anchor: "Portico",
  prefixes: ["portico.io/"],
  entries: [
    implemented(
      PORTICO_ANNOTATIONS.managedBy,
      "written by Portico: the class under which it took the Service on (not for users to set)",
    ),
  ],
};
