// Keeps each IPAddressPool's status current: how many addresses are assigned and available per family, and a
// Valid condition that says what is wrong with a pool the allocator cannot use. Writes only what changed,
// compared with the status the pool already has, so a restarted controller rewrites nothing.
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { PoolFinding } from "./poolFindings.ts";
import type { PoolState } from "./provider.ts";
import type { ClusterView } from "../cluster.ts";
import type { Logger } from "../../shared/log.ts";
import { MetallbPoolStatus } from "./metallbPoolStatus.ts";
import { mergePatch } from "../../shared/patch.ts";

const DEBOUNCE_MS = 300;

export interface PoolCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime?: string;
}

export interface PoolStatus {
  readonly assignedIPv4: string;
  readonly assignedIPv6: string;
  readonly availableIPv4: string;
  readonly availableIPv6: string;
  readonly conditions: readonly PoolCondition[];
}

/**
 * The status to write over `current` (what the pool's status says now), or undefined when it says the
 * same already, timestamps aside. A condition keeps its lastTransitionTime while its status stays, as
 * Kubernetes conditions do; one that is new or changed status gets `now`.
 */
export function nextPoolStatus(desired: PoolStatus, current: unknown, now: string): PoolStatus | undefined {
  const existing = new Map(conditionsOf(current).map((c) => [c.type, c] as const));
  const conditions = desired.conditions.map((c) => {
    const before = existing.get(c.type);
    const since = before?.status === c.status ? before.lastTransitionTime : undefined;
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: since ?? now,
    };
  });
  const next = { ...desired, conditions };
  return sameStatus(next, current) ? undefined : next;
}

function conditionsOf(status: unknown): PoolCondition[] {
  const conditions = (status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as PoolCondition[]) : [];
}

const COUNTS = ["assignedIPv4", "assignedIPv6", "availableIPv4", "availableIPv6"] as const;

function sameStatus(next: PoolStatus, current: unknown): boolean {
  const was = (current ?? {}) as Record<string, unknown>;
  if (COUNTS.some((count) => was[count] !== next[count])) return false;
  const before = conditionsOf(current);
  return (
    before.length === next.conditions.length &&
    next.conditions.every((c, i) => {
      const b = before[i];
      return (
        b?.type === c.type &&
        b.status === c.status &&
        b.reason === c.reason &&
        b.message === c.message &&
        typeof b.lastTransitionTime === "string"
      );
    })
  );
}

function finding(type: string, reason: string, found: PoolFinding[]) {
  return found.length
    ? { type, status: "True", reason, message: found.map((f) => f.message).join("; ") }
    : { type, status: "False", reason: "None", message: "none" };
}

export class PoolStatusWriter {
  private readonly api: CustomObjectsApi;
  private readonly cache: ClusterView;
  private readonly state: () => PoolState;
  private readonly log: Logger;
  private readonly namespace: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly written = new Map<string, string>();
  private readonly metallb: MetallbPoolStatus;
  private readonly checked: (kind: string, name: string, outcome: "written" | "unchanged") => void;

  /**
   * `namespace`: the one namespace this controller serves, if it is confined to one; `checked`: told of each
   * pool's status compared (the controller counts them).
   */
  constructor(
    kc: KubeConfig,
    cache: ClusterView,
    state: () => PoolState,
    log: Logger,
    namespace?: string,
    checked: (kind: string, name: string, outcome: "written" | "unchanged") => void = () => {},
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
    this.cache = cache;
    this.state = state;
    this.log = log;
    this.namespace = namespace;
    this.checked = checked;
    this.metallb = new MetallbPoolStatus(kc, log);
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
    const state = this.state();
    const { counts, invalid, findings } = state;
    for (const pool of this.cache.pools?.list() ?? []) {
      if (!seesAllOf(pool, this.namespace)) continue;
      const name = pool.metadata!.name!;
      const c = counts.find((x) => x.pool === name);
      const problems = invalid.find((x) => x.pool === name && x.group === "portico.io")?.problems ?? [];
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
                // A name defined by both kinds is not the spec's fault, and the fix is another name.
                reason: problems.some((p) => p.field === "metadata.name") ? "DuplicateName" : "InvalidSpec",
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
          finding(
            "AddressesInUse",
            "AddressInUse",
            findings.filter((f) => f.kind === "AddressInUse" && f.pool === name),
          ),
        ],
      };
      const key = JSON.stringify(status);
      // Not again what this process last wrote, even while the cache does not show that write yet.
      if (this.written.get(name) === key) {
        this.checked("IPAddressPool", name, "unchanged");
        continue;
      }
      const next = nextPoolStatus(status, pool.status, new Date().toISOString());
      if (next) {
        await this.api.patchClusterCustomObjectStatus(
          {
            group: "portico.io",
            version: "v1alpha1",
            plural: "ipaddresspools",
            name,
            body: { status: next },
          },
          mergePatch,
        );
      }
      this.checked("IPAddressPool", name, next ? "written" : "unchanged");
      this.written.set(name, key);
    }
    await this.metallb.write(
      this.cache.metallbPoolList().filter((pool) => seesAllOf(pool, this.namespace)),
      state,
    );
  }
}

/**
 * Pools are cluster-wide, but a controller confined to one namespace counts only that namespace's Services: it
 * knows a pool's whole allocation only when the pool serves that namespace alone, and writes no other pool's
 * status (which would show its partial counts, and fight with the controllers of other namespaces).
 */
export function seesAllOf(pool: { spec?: unknown }, namespace: string | undefined): boolean {
  if (namespace === undefined) return true;
  const allocation = (pool.spec as { serviceAllocation?: Record<string, unknown> } | undefined)
    ?.serviceAllocation;
  const namespaces = allocation?.namespaces;
  const selectors = allocation?.namespaceSelectors;
  return (
    Array.isArray(namespaces) &&
    namespaces.length > 0 &&
    namespaces.every((n) => n === namespace) &&
    !(Array.isArray(selectors) && selectors.length > 0)
  );
}
