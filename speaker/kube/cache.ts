// The speaker's view of Kubernetes: list-watches of Services, EndpointSlices and Nodes. A watch that fails
// is restarted with backoff; the list-watch relists when its resourceVersion is too old, so nothing is
// missed across apiserver restarts.
import {
  CoreV1Api,
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
    for (const [kind, lw] of [
      ["service", this.services],
      ["endpointslice", this.endpointSlices],
      ["node", this.nodes],
    ] as const) {
      this.wire(kind, lw);
    }
  }

  /** Called after any change to any watched object. */
  onChange(handler: () => void): void {
    this.handlers.push(handler);
  }

  /** Lists everything and starts watching; resolves once each list has completed. */
  async start(): Promise<void> {
    const all = [this.services, this.endpointSlices, this.nodes] as ListWatch<KubernetesObject>[];
    await Promise.all(all.map((lw) => lw.start()));
    while (!this.stopped && all.some((lw) => !lw.latestResourceVersion())) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.services.stop(), this.endpointSlices.stop(), this.nodes.stop()]);
  }

  private wire(kind: string, lw: ListWatch<KubernetesObject>): void {
    for (const verb of ["add", "update", "delete"] as const) {
      lw.on(verb, () => this.handlers.forEach((handler) => handler()));
    }
    let delay = 500;
    lw.on("connect", () => {
      delay = 500;
    });
    lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      this.log.warn(
        { kind, err: (err as Error)?.message ?? String(err), retryInMs: delay },
        "watch failed; restarting",
      );
      setTimeout(() => {
        if (!this.stopped) lw.start().catch(() => undefined);
      }, delay).unref();
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    });
  }
}
