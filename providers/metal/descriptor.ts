// The bare-metal provider as the controller and porticoctl know it (providers/descriptor.ts): addresses from
// IPAddressPools (Portico's, and MetalLB's when installed) for the class portico.io/metal, announced by the
// speakers; the controller keeps each pool's status current.
import { UsageError } from "../../shared/usageError.ts";
import { METAL_LOAD_BALANCER_CLASS } from "../classes.ts";
import type { FlagTable, ProviderDescriptor } from "../descriptor.ts";
import { METAL_ANNOTATION_CATALOG } from "./annotations/catalog.ts";

export interface MetalSettings {
  /**
   * Also allocate from MetalLB's IPAddressPools when installed (auto), always (on), or never (off), found in
   * `namespace`.
   */
  metallb: { mode: "auto" | "on" | "off"; namespace: string };
}

export const METAL = {
  name: "metal",
  loadBalancerClass: METAL_LOAD_BALANCER_CLASS,
  inspects: [],
  namesByCluster: false,
  annotations: METAL_ANNOTATION_CATALOG,
  flags: {
    metallb: { type: "string" },
    "metallb-namespace": { type: "string" },
  } as const satisfies FlagTable,
  usage: `  --metallb auto|on|off             also allocate from MetalLB's IPAddressPools (metallb.io/v1beta1), read as they
                                    are: when the CRD is installed (auto, the default), always, or never
                                    (env PORTICO_METALLB)
  --metallb-namespace NS            where MetalLB's pools live (default metallb-system; env PORTICO_METALLB_NAMESPACE)`,
  settings(values, env) {
    const mode = (values.metallb as string | undefined) ?? env.PORTICO_METALLB ?? "auto";
    if (mode !== "auto" && mode !== "on" && mode !== "off")
      throw new UsageError(`--metallb must be auto, on or off (got ${mode})`);
    const namespace =
      (values["metallb-namespace"] as string | undefined) ??
      env.PORTICO_METALLB_NAMESPACE ??
      "metallb-system";
    return { metallb: { mode, namespace } };
  },
  needs: ({ metallb }) => ({
    pools: true,
    ...(metallb.mode !== "off"
      ? { metallb: { namespace: metallb.namespace, required: metallb.mode === "on" } }
      : {}),
  }),
  async start(_settings, context) {
    const [{ MetalProvider }, { metalInventory }, { PoolStatusWriter }] = await Promise.all([
      import("./provider.ts"),
      import("./inventory.ts"),
      import("./poolStatus.ts"),
    ]);
    const metal = new MetalProvider(metalInventory(context.cluster, context.classes));
    const status = new PoolStatusWriter(
      context.kc,
      context.cluster,
      () => metal.poolState(),
      context.log,
      context.namespace,
      context.onStatusCheck,
    );
    return {
      provider: metal,
      afterReconcile: () => status.schedule(),
      poolCounts: () => metal.poolCounts(),
      stop: () => status.stop(),
    };
  },

  /** porticoctl plans on a one-off snapshot of the cluster's pools and allocations. */
  async planner(context) {
    const { snapshotPlanner } = await import("./snapshot.ts");
    return snapshotPlanner(context.kc, context.core, {
      defaultForUnclassed: context.classes.defaultForUnclassed,
    });
  },
} satisfies ProviderDescriptor<MetalSettings>;
