// Portico's own `portico.io/` Service annotations. A key under the prefix that is not listed here is a typo
// and refused.
import type { KeyFamily } from "./types.ts";

export const PORTICO_KEYS: KeyFamily = {
  anchor: "Portico",
  prefixes: ["portico.io/"],
  providers: ["aws", "azure", "metal"],
  entries: [
    {
      key: "portico.io/managed-by",
      status: "implemented",
      summary: "written by Portico: the class under which it took the Service on (not for users to set)",
    },
    {
      key: "portico.io/ip-allocated-from-pool",
      status: "implemented",
      summary:
        "written by Portico on bare-metal Services: the pool each address came from (two, comma-separated, in ingress order, for a dual-stack Service served by two pools), read by the speakers to choose between overlapping pools",
      providers: ["metal"],
    },
    {
      key: "portico.io/target-node-labels",
      status: "implemented",
      summary: "only nodes matching this label selector are targets",
      providers: ["aws", "azure"],
    },
    {
      key: "portico.io/health-check-kube-proxy",
      status: "implemented",
      summary: "with externalTrafficPolicy Cluster, health-check kube-proxy's :10256/healthz",
      providers: ["aws", "azure"],
    },
    {
      key: "portico.io/target-type",
      status: "implemented",
      summary: "instance (node IPs, the default) or ip (pod IPs) backends",
      providers: ["azure"],
    },
    {
      key: "portico.io/floating-ip",
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
