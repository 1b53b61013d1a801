// Keeps each IPAddressPool's status current: how many addresses are assigned and available per family, and a
// Valid condition that says what is wrong with a pool the allocator cannot use. Writes only what changed.
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { PoolFinding } from "../providers/metal/poolFindings.ts";
import type { PoolState } from "../providers/metal/provider.ts";
import type { ClusterCache } from "./cache.ts";
import type { Logger } from "./log.ts";
import { mergePatch } from "./patch.ts";

const DEBOUNCE_MS = 300;

function finding(type: string, reason: string, found: PoolFinding[]) {
  return found.length
    ? { type, status: "True", reason, message: found.map((f) => f.message).join("; ") }
    : { type, status: "False", reason: "None", message: "none" };
}

export class PoolStatusWriter {
  private readonly api: CustomObjectsApi;
  private readonly cache: ClusterCache;
  private readonly state: () => PoolState;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private readonly written = new Map<string, string>();

  constructor(kc: KubeConfig, cache: ClusterCache, state: () => PoolState, log: Logger) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.cache = cache;
    this.state = state;
    this.log = log;
  }

  /** Asks for a write soon; many requests in a burst cost one round of writes. */
  schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write().catch((err: unknown) =>
        this.log.warn({ err: (err as Error).message }, "could not update pool status"),
      );
    }, DEBOUNCE_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async write(): Promise<void> {
    const { counts, invalid, findings } = this.state();
    for (const pool of this.cache.pools?.list() ?? []) {
      const name = pool.metadata!.name!;
      const c = counts.find((x) => x.pool === name);
      const problems = invalid.find((x) => x.pool === name)?.problems ?? [];
      const status = {
        assignedIPv4: String(c?.assignedIPv4 ?? 0n),
        assignedIPv6: String(c?.assignedIPv6 ?? 0n),
        availableIPv4: String(c?.availableIPv4 ?? 0n),
        availableIPv6: String(c?.availableIPv6 ?? 0n),
        conditions: [
          problems.length
            ? {
                type: "Valid",
                status: "False",
                reason: "InvalidSpec",
                message: problems.map((p) => `${p.field}: ${p.message}`).join("; "),
              }
            : { type: "Valid", status: "True", reason: "Valid", message: "the allocator uses this pool" },
          finding(
            "Overlaps",
            "PoolsOverlap",
            findings.filter((f) => f.kind === "PoolsOverlap" && f.pools.includes(name)),
          ),
          finding(
            "ContainsNodeAddresses",
            "NodeAddressInPool",
            findings.filter((f) => f.kind === "NodeAddressInPool" && f.pool === name),
          ),
        ],
      };
      const key = JSON.stringify(status);
      if (this.written.get(name) === key) continue;
      const now = new Date().toISOString();
      await this.api.patchClusterCustomObjectStatus(
        {
          group: "portico.io",
          version: "v1alpha1",
          plural: "ipaddresspools",
          name,
          body: {
            status: {
              ...status,
              conditions: status.conditions.map((c) => ({ ...c, lastTransitionTime: now })),
            },
          },
        },
        mergePatch,
      );
      this.written.set(name, key);
    }
  }
}
