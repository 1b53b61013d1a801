// Portico's own `portico.io/` Service annotations. A key under the prefix that is not listed here is a typo
// and refused.
import { POOL_RECORD_ANNOTATION } from "../../shared/request.ts";
import { AWS_ANNOTATION_KEYS } from "./aws.ts";
import type { KeyFamily } from "./types.ts";

/** Portico's own keys the providers read, spelled here once. */
export const PORTICO_ANNOTATIONS = {
  managedBy: "portico.io/managed-by",
  targetNodeLabels: "portico.io/target-node-labels",
  kubeProxyHealthCheck: "portico.io/health-check-kube-proxy",
  targetType: "portico.io/target-type",
  floatingIP: "portico.io/floating-ip",
} as const;

/** Target-node selectors: Portico's own key, and the one users already write for the AWS Load Balancer Controller. */
export const TARGET_NODE_LABEL_ANNOTATIONS = [
  PORTICO_ANNOTATIONS.targetNodeLabels,
  AWS_ANNOTATION_KEYS.targetNodeLabels,
];

export const PORTICO_KEYS: KeyFamily = {
  anchor: "Portico",
  prefixes: ["portico.io/"],
  providers: ["aws", "azure", "metal"],
  entries: [
    {
      key: PORTICO_ANNOTATIONS.managedBy,
      status: "implemented",
      summary: "written by Portico: the class under which it took the Service on (not for users to set)",
    },
    {
      key: POOL_RECORD_ANNOTATION,
      status: "implemented",
      summary:
        "written by Portico on bare-metal Services: the pool each address came from (two, comma-separated, in ingress order, for a dual-stack Service served by two pools), read by the speakers to choose between overlapping pools",
      providers: ["metal"],
    },
    {
      key: PORTICO_ANNOTATIONS.targetNodeLabels,
      status: "implemented",
      summary: "only nodes matching this label selector are targets",
      providers: ["aws", "azure"],
    },
    {
      key: PORTICO_ANNOTATIONS.kubeProxyHealthCheck,
      status: "implemented",
      summary: "with externalTrafficPolicy Cluster, health-check kube-proxy's :10256/healthz",
      providers: ["aws", "azure"],
    },
    {
      key: PORTICO_ANNOTATIONS.targetType,
      status: "implemented",
      summary: "instance (node IPs, the default) or ip (pod IPs) backends",
      providers: ["azure"],
    },
    {
      key: PORTICO_ANNOTATIONS.floatingIP,
      status: "implemented",
      summary: "floating IP (direct server return) on the Service's rules",
      providers: ["azure"],
    },
    {
      key: "portico.io/loadBalancerIPs",
      status: "implemented",
      summary: "the address(es) to use, one per family",
      providers: ["metal"],
    },
    {
      key: "portico.io/address-pool",
      status: "implemented",
      summary: "the pool to take the address from",
      providers: ["metal"],
    },
    {
      key: "portico.io/allow-shared-ip",
      status: "implemented",
      summary: "Services with the same key share an address when their ports differ",
      providers: ["metal"],
    },
  ],
};
