// The speaker's view of Kubernetes: list-watches of Services, EndpointSlices, Nodes and IPAddressPools. A
// watch that fails is restarted with backoff; the list-watch relists when its resourceVersion is too old, so
// nothing is missed across apiserver restarts.
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type V1EndpointSlice,
  type V1Node,
  type V1Service,
} from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { PoolObject } from "../pools.ts";

const MAX_RESTART_DELAY_MS = 30_000;

export interface KubeCacheOptions {
  /** Services and EndpointSlices of this namespace only (default: all). */
  readonly namespace?: string;
  /** Only Nodes matching this label selector take part (default: all). */
  readonly nodeSelector?: string;
}

export class KubeCache {
  readonly services: ListWatch<V1Service>;
  readonly endpointSlices: ListWatch<V1EndpointSlice>;
  readonly nodes: ListWatch<V1Node>;
  private readonly poolWatch: ListWatch<PoolObject & KubernetesObject>;
  /**
   * The pools' resourceVersion when the apiserver answered 404 (no IPAddressPool CRD): there are no pools,
   * rather than pools not yet listed, until a list or an event moves the resourceVersion on.
   */
  private poolsMissingAt: string | undefined;
  private readonly log: Logger;
  private readonly handlers: (() => void)[] = [];
  private stopped = false;

  constructor(kc: KubeConfig, log: Logger, options: KubeCacheOptions = {}) {
    this.log = log;
    const watch = new Watch(kc);
    const core = kc.makeApiClient(CoreV1Api);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const ns = options.namespace;
    this.services = new ListWatch<V1Service>(
      ns ? `/api/v1/namespaces/${ns}/services` : "/api/v1/services",
      watch,
      () => (ns ? core.listNamespacedService({ namespace: ns }) : core.listServiceForAllNamespaces()),
      false,
    );
    this.endpointSlices = new ListWatch<V1EndpointSlice>(
      ns
        ? `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`
        : "/apis/discovery.k8s.io/v1/endpointslices",
      watch,
      () =>
        ns
          ? discovery.listNamespacedEndpointSlice({ namespace: ns })
          : discovery.listEndpointSliceForAllNamespaces(),
      false,
    );
    const selector = options.nodeSelector;
    this.nodes = new ListWatch<V1Node>(
      "/api/v1/nodes",
      watch,
      () => core.listNode(selector ? { labelSelector: selector } : {}),
      false,
      selector,
    );
    const custom = kc.makeApiClient(CustomObjectsApi);
    this.poolWatch = new ListWatch<PoolObject & KubernetesObject>(
      "/apis/portico.io/v1alpha1/ipaddresspools",
      watch,
      () =>
        custom.listClusterCustomObject({
          group: "portico.io",
          version: "v1alpha1",
          plural: "ipaddresspools",
        }) as Promise<{ items: (PoolObject & KubernetesObject)[]; metadata?: { resourceVersion?: string } }>,
      false,
    );
    for (const [kind, lw] of [
      ["service", this.services],
      ["endpointslice", this.endpointSlices],
      ["node", this.nodes],
      ["ipaddresspool", this.poolWatch],
    ] as const) {
      this.wire(kind, lw);
    }
  }

  /** The IPAddressPools; none while their CRD is not installed. */
  pools(): readonly PoolObject[] {
    return this.poolsMissing() ? [] : this.poolWatch.list();
  }

  private poolsMissing(): boolean {
    return (
      this.poolsMissingAt !== undefined && this.poolsMissingAt === this.poolWatch.latestResourceVersion()
    );
  }

  /** Called after any change to any watched object. */
  onChange(handler: () => void): void {
    this.handlers.push(handler);
  }

  /** Lists everything and starts watching; resolves once each list has completed. */
  async start(): Promise<void> {
    const all = this.all();
    await Promise.all(all.map((lw) => lw.start()));
    const listed = (lw: ListWatch<KubernetesObject>) =>
      lw.latestResourceVersion() !== "" || (lw === this.poolWatch && this.poolsMissing());
    while (!this.stopped && !all.every(listed)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.all().map((lw) => lw.stop()));
  }

  private all(): ListWatch<KubernetesObject>[] {
    return [this.services, this.endpointSlices, this.nodes, this.poolWatch] as ListWatch<KubernetesObject>[];
  }

  /**
   * Without the CRD there are no pools, so no node selectors, and the speaker announces as it would
   * without pools rather than not at all. Any other failure (403: the speaker's RBAC lacks pools) leaves
   * the pools unknown, and the speaker stays unready rather than ignore selectors it cannot read.
   */
  private poolsNotInstalled(): void {
    const wasMissing = this.poolsMissing();
    this.poolsMissingAt = this.poolWatch.latestResourceVersion();
    if (!wasMissing) this.handlers.forEach((handler) => handler());
  }

  private wire(kind: string, lw: ListWatch<KubernetesObject>): void {
    for (const verb of ["add", "update", "delete"] as const) {
      lw.on(verb, () => this.handlers.forEach((handler) => handler()));
    }
    let delay = 500;
    // "connect" comes before each list too: only one after a successful list says the restart worked, so a
    // list that keeps failing (no pool CRD) backs off instead of retrying twice a second forever.
    lw.on("connect", () => {
      if (lw.latestResourceVersion()) delay = 500;
    });
    lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      // An API call's failure carries `code`, a watch request's `statusCode`.
      const code = (err as { code?: unknown })?.code ?? (err as { statusCode?: unknown })?.statusCode;
      if (kind === "ipaddresspool" && code === 404) this.poolsNotInstalled();
      this.log.warn(
        { kind, err: explain(kind, code) ?? (err as Error)?.message ?? String(err), retryInMs: delay },
        "watch failed; restarting",
      );
      setTimeout(() => {
        if (!this.stopped) lw.start().catch(() => undefined);
      }, delay).unref();
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    });
  }
}

function explain(kind: string, code: unknown): string | undefined {
  if (kind !== "ipaddresspool") return undefined;
  if (code === 404) return "the IPAddressPool CRD is not installed; announcing without pool node selectors";
  if (code === 403)
    return "may not list IPAddressPools: apply the speaker's RBAC (manifests/speaker/rbac.yaml)";
  return undefined;
}
