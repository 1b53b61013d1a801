// The bare-metal settings that cannot work together on one Service. Each is judged where the request is read
// (shared/request.ts, two sources that disagree) or the address is chosen (providers/metal/allocator.ts);
// the table lists them with an example each, walked by a unit test like the clouds' tables. Between Services,
// the allocator refuses sharing an address across different pods with externalTrafficPolicy Local
// (providers/metal/addressBook.ts), as MetalLB does.
import { annotationField as field, type CombinationTable } from "../../annotationKeys/combinations.ts";

export const METAL_COMBINATIONS: CombinationTable<never> = {
  provider: "metal",
  entries: [
    {
      fields: ["spec.loadBalancerIP", field("metallb.io/loadBalancerIPs")],
      checkedIn: "shared/request.ts (also portico.io/ and metallb.universe.tf/loadBalancerIPs)",
      fix: "keep one of them or make them equal",
      reason: "ConflictingAnnotations",
      example: {
        annotations: { "metallb.io/loadBalancerIPs": "192.0.2.1" },
        spec: { loadBalancerIP: "192.0.2.2" },
      },
    },
    {
      fields: [field("portico.io/address-pool"), field("metallb.io/address-pool")],
      checkedIn: "shared/request.ts (also metallb.universe.tf/address-pool, and the allow-shared-ip keys)",
      fix: "keep one of them or make them equal",
      reason: "ConflictingAnnotations",
      example: { annotations: { "portico.io/address-pool": "lan", "metallb.io/address-pool": "dmz" } },
    },
    {
      fields: [field("metallb.io/loadBalancerIPs"), field("metallb.io/address-pool")],
      checkedIn: "providers/metal/allocator.ts (the address must be in the named pool)",
      fix: "ask for an address of that pool, or name the pool that holds it",
      reason: "InvalidRequestedAddress",
      example: {
        annotations: { "metallb.io/loadBalancerIPs": "198.51.100.1", "metallb.io/address-pool": "lan" },
      },
    },
  ],
};
