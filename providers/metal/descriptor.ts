// The bare-metal provider as the controller and porticoctl know it (providers/descriptor.ts): addresses from
// IPAddressPools (Portico's, and MetalLB's when installed) for the class portico.io/metal, announced by the
// speakers; the controller keeps each pool's status current.
import type { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { UsageError } from "../../shared/usageError.ts";
import { METAL_LOAD_BALANCER_CLASS } from "../classes.ts";
import type { FlagTable, ProviderDescriptor } from "../descriptor.ts";
import type { LoadBalancerProvider } from "../provider.ts";

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
  flags: {
    metallb: { type: "string" },
    "metallb-namespace": { type: "string" },
  } as const satisfies FlagTable,
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

  /** The provider on a one-off snapshot of the cluster (porticoctl plan, migrate). */
  async snapshotPlanner(
    kc: KubeConfig,
    core: CoreV1Api,
    opts: { defaultForUnclassed?: boolean } = {},
  ): Promise<LoadBalancerProvider> {
    const { snapshotPlanner } = await import("./snapshot.ts");
    return snapshotPlanner(kc, core, opts);
  },
} satisfies ProviderDescriptor<MetalSettings> & Record<string, unknown>;
