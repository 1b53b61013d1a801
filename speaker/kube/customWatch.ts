// A list-watch of custom resources whose CRD may be missing: Portico's IPAddressPools and L2Advertisements, and
// MetalLB's, read as they are when MetalLB's CRDs are installed. A 404 means "not installed", so there are
// none (rather than "not yet listed") until a list or an event moves the resourceVersion on; the watch keeps
// retrying, so a CRD installed later is picked up. Any other failure (403: the RBAC lacks the kind) leaves the
// objects unknown, and the speaker stays unready rather than announce from nodes a selector excludes.
import type { KubernetesObject } from "@kubernetes/client-node";
import { resourcePath, type KubeApi } from "./api/client.ts";
import { ListWatch } from "./api/listWatch.ts";

export interface CustomKind {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Namespaced kinds are read in this one namespace (MetalLB reads its own namespace only). */
  readonly namespace?: string;
  /** What to tell the user when the CRD is missing. */
  readonly whenMissing: string;
  /** Retry a missing CRD this rarely at most: optional kinds need not cost every speaker a list each 30 s. */
  readonly missingRetryMs: number;
  /** Log the missing CRD once rather than at every retry (optional kinds that are usually absent). */
  readonly quietWhenMissing: boolean;
}

export class CustomWatch<T extends KubernetesObject> {
  readonly kind: CustomKind;
  readonly lw: ListWatch<T>;
  private missingAt: string | undefined;
  private toldMissing = false;

  /** `trim` drops what the speaker never reads of each object before it is kept. */
  constructor(api: KubeApi, kind: CustomKind, trim?: (obj: T) => void) {
    this.kind = kind;
    this.lw = new ListWatch<T>(api, resourcePath(kind), trim ? { trim } : {});
  }

  get name(): string {
    return `${this.kind.plural}.${this.kind.group}`;
  }

  /** The objects; none while the CRD is not installed. */
  list(): readonly T[] {
    return this.missing() ? [] : this.lw.list();
  }

  missing(): boolean {
    return this.missingAt !== undefined && this.missingAt === this.lw.latestResourceVersion();
  }

  /** Listed at least once, or known to be missing. */
  listed(): boolean {
    return this.lw.latestResourceVersion() !== "" || this.missing();
  }

  /**
   * Records a failed list or watch: whether the kind just became missing (the speaker recomputes then), the
   * most to wait before retrying, and what to log, if anything.
   */
  failed(code: unknown): { newlyMissing: boolean; maxDelayMs?: number; log?: string; quiet?: boolean } {
    if (code !== 404) {
      const rbac = `may not list ${this.name}: apply the speaker's RBAC (manifests/speaker/rbac.yaml)`;
      return { newlyMissing: false, ...(code === 403 ? { log: rbac } : {}) };
    }
    const was = this.missing();
    this.missingAt = this.lw.latestResourceVersion();
    const quiet = this.kind.quietWhenMissing && this.toldMissing;
    this.toldMissing = true;
    return {
      newlyMissing: !was,
      maxDelayMs: this.kind.missingRetryMs,
      log: this.kind.whenMissing,
      ...(quiet ? { quiet } : {}),
    };
  }
}
