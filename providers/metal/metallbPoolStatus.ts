// Status of MetalLB's IPAddressPools (metallb.io/v1beta1) that the controller allocates from. MetalLB's CRD
// has counted addresses in the status since v0.15 (assignedIPv4, assignedIPv6, availableIPv4, availableIPv6:
// integers, all required) and has no conditions; before v0.15 its status has no fields at all. So the counts
// are written only when the installed CRD's schema declares them (read from the CRD, rechecked every ten
// minutes), as integers, and what Portico would put in a condition (an unusable pool, overlaps, a node's
// address inside, a name defined by both kinds) is logged instead, once per change.
import { ApiextensionsV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { PoolState } from "./provider.ts";
import type { IPAddressPoolObject } from "../cluster.ts";
import type { Logger } from "../../shared/log.ts";
import { mergePatch } from "../../shared/patch.ts";

const CRD = "ipaddresspools.metallb.io";
const COUNTS = ["assignedIPv4", "assignedIPv6", "availableIPv4", "availableIPv6"] as const;
const SCHEMA_RECHECK_MS = 600_000;

/** MetalLB's counts are int64; JSON numbers stay exact up to 2^53 - 1, which says "more than you will use". */
export function metallbCount(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/** Whether a MetalLB IPAddressPool CRD (as read from the apiserver) declares the status counts. */
export function declaresCounts(crd: unknown): boolean {
  const versions = (crd as { spec?: { versions?: unknown } })?.spec?.versions;
  if (!Array.isArray(versions)) return false;
  const v1beta1 = versions.find((v: { name?: string }) => v?.name === "v1beta1") as
    | {
        subresources?: { status?: unknown };
        schema?: { openAPIV3Schema?: { properties?: { status?: { properties?: Record<string, unknown> } } } };
      }
    | undefined;
  const fields = v1beta1?.schema?.openAPIV3Schema?.properties?.status?.properties ?? {};
  return v1beta1?.subresources?.status !== undefined && COUNTS.every((count) => count in fields);
}

export class MetallbPoolStatus {
  private readonly custom: CustomObjectsApi;
  private readonly crds: ApiextensionsV1Api;
  private readonly log: Logger;
  private schema: { counts: boolean; at: number } | undefined;
  private readonly written = new Map<string, string>();
  private readonly reported = new Map<string, string>();

  constructor(kc: KubeConfig, log: Logger) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.crds = kc.makeApiClient(ApiextensionsV1Api);
    this.log = log;
  }

  async write(pools: readonly IPAddressPoolObject[], state: PoolState): Promise<void> {
    if (pools.length === 0) return;
    const counts = await this.countsDeclared();
    for (const pool of pools) {
      const name = pool.metadata!.name!;
      const namespace = pool.metadata!.namespace!;
      this.report(`${namespace}/${name}`, problemsOf(name, state));
      if (!counts) continue;
      const c = state.counts.find((x) => x.pool === name);
      const status = Object.fromEntries(COUNTS.map((count) => [count, metallbCount(c?.[count] ?? 0n)]));
      const key = `${namespace}/${name}`;
      const text = JSON.stringify(status);
      if (this.written.get(key) === text) continue;
      const current = pool.status ?? {};
      if (COUNTS.some((count) => current[count] !== status[count])) {
        await this.custom.patchNamespacedCustomObjectStatus(
          {
            group: "metallb.io",
            version: "v1beta1",
            plural: "ipaddresspools",
            namespace,
            name,
            body: { status },
          },
          mergePatch,
        );
      }
      this.written.set(key, text);
    }
  }

  /** What a Portico pool's conditions would say, as a log line whenever it changes. */
  private report(key: string, problems: string[]): void {
    const text = problems.join("; ");
    if ((this.reported.get(key) ?? "") === text) return;
    this.reported.set(key, text);
    if (text) this.log.warn({ pool: key, group: "metallb.io", problems }, "MetalLB IPAddressPool: " + text);
    else this.log.info({ pool: key, group: "metallb.io" }, "MetalLB IPAddressPool: usable, no problems");
  }

  private async countsDeclared(): Promise<boolean> {
    if (this.schema && Date.now() - this.schema.at < SCHEMA_RECHECK_MS) return this.schema.counts;
    let counts = false;
    try {
      counts = declaresCounts(await this.crds.readCustomResourceDefinition({ name: CRD }));
    } catch (err) {
      this.log.warn(
        { crd: CRD, err: (err as Error).message },
        "cannot read MetalLB's IPAddressPool CRD to see whether its status counts addresses; not writing them",
      );
    }
    if (this.schema?.counts !== counts) {
      this.log.info(
        { crd: CRD, counts },
        counts
          ? "MetalLB's IPAddressPool status counts addresses: Portico keeps them current"
          : "MetalLB's IPAddressPool CRD declares no status counts (before v0.15): none written",
      );
    }
    this.schema = { counts, at: Date.now() };
    return counts;
  }
}

function problemsOf(name: string, state: PoolState): string[] {
  return [
    ...state.invalid
      .filter((x) => x.pool === name && x.group === "metallb.io")
      .flatMap((x) => x.problems.map((p) => `${p.field}: ${p.message}`)),
    ...state.findings
      .filter((f) => (f.kind === "PoolsOverlap" ? f.pools.includes(name) : f.pool === name))
      .map((f) => f.message),
  ];
}
