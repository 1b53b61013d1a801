// MetalLB's Service annotations, under its current `metallb.io/` prefix and the legacy `metallb.universe.tf/`.
import { PORTICO_ENTRIES } from "../../annotationKeys/portico.ts";
import type { KeyEntry, ProviderAnnotations, ProviderKeyFamily } from "../../annotationKeys/types.ts";

const PREFIXES = ["metallb.io/", "metallb.universe.tf/"] as const;

const both = (suffix: string, status: KeyEntry["status"], summary: string): KeyEntry[] =>
  PREFIXES.map((prefix) => ({ key: prefix + suffix, status, summary }));

export const METALLB_KEYS: ProviderKeyFamily = {
  anchor: "MetalLB",
  prefixes: PREFIXES,
  entries: [
    ...both("loadBalancerIPs", "implemented", "the address(es) to use, one per family"),
    ...both("address-pool", "implemented", "the pool to take the address from"),
    ...both(
      "allow-shared-ip",
      "implemented",
      "Services with the same key share an address when their ports differ",
    ),
    ...both(
      "ip-allocated-from-pool",
      "implemented",
      "MetalLB's record of where an address came from: the speakers read it to choose between overlapping pools when Portico's own record is absent",
    ),
  ],
};

/** What the bare-metal provider reads: MetalLB's family, and Portico's own keys for addresses and pools. */
export const METAL_ANNOTATION_CATALOG: ProviderAnnotations = {
  families: [METALLB_KEYS],
  porticoKeys: [
    PORTICO_ENTRIES.poolRecord,
    PORTICO_ENTRIES.loadBalancerIPs,
    PORTICO_ENTRIES.addressPool,
    PORTICO_ENTRIES.allowSharedIp,
  ],
};
