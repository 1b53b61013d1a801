// MetalLB's Service annotations, under its current `metallb.io/` prefix and the legacy `metallb.universe.tf/`.
import type { KeyEntry, KeyFamily } from "./types.ts";

const PREFIXES = ["metallb.io/", "metallb.universe.tf/"] as const;

const both = (suffix: string, status: KeyEntry["status"], summary: string): KeyEntry[] =>
  PREFIXES.map((prefix) => ({ key: prefix + suffix, status, summary }));

export const METALLB_KEYS: KeyFamily = {
  anchor: "MetalLB",
  prefixes: PREFIXES,
  providers: ["metal"],
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
