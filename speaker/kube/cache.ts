// The speaker's view of Kubernetes: list-watches of Services, EndpointSlices, Nodes, Portico's IPAddressPools
// and L2Advertisements, the speakers' ServiceL2Status records, the BGP mode's objects when it runs, and MetalLB's
// (metallb.io/v1beta1, in MetalLB's namespace) when asked to read them. Advertisements reach the modes as plain
// configuration objects, so this folder knows no mode. A watch that fails is restarted with backoff; the list-watch
// relists when its resourceVersion is too old, so nothing is missed across apiserver restarts.
import type { KubernetesObject, V1EndpointSlice, V1Node, V1Service } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { ConfigObject } from "../configObjects.ts";
import type { PoolObject } from "../pools.ts";
import {
  L2STATUS_GROUP,
  L2STATUS_PLURAL,
  L2STATUS_VERSION,
  readL2Status,
  trimL2Status,
  type L2StatusRecord,
} from "../../shared/l2status.ts";
import { KubeApiError, type KubeApi } from "./api/client.ts";
import { ListWatch } from "./api/listWatch.ts";
import { CustomWatch } from "./customWatch.ts";
import { trimEndpointSlice, trimNode, trimService } from "./trim.ts";
import { BgpWatches, type BgpObjects } from "./bgpWatches.ts";

const MAX_RESTART_DELAY_MS = 30_000;
/** MetalLB's CRDs are usually absent: look for them every five minutes, not every 30 s, on every node. */
const OPTIONAL_RETRY_MS = 300_000;

export interface KubeCacheOptions {
  /** Services and EndpointSlices of this namespace only (default: all). */
  readonly namespace?: string;
  /** Only Nodes matching this label selector take part (default: all). */
  readonly nodeSelector?: string;
  /** Also read MetalLB's IPAddressPools and L2Advertisements in this namespace (default: not at all). */
  readonly metallbNamespace?: string;
  /** MetalLB's CRDs were asked for explicitly: their absence is worth a warning at every retry. */
  readonly metallbRequired?: boolean;
  /** Also watch the BGP mode's objects (BGPPeers, BGPAdvertisements, BFDProfiles). */
  readonly bgp?: boolean;
}

type Pools = CustomWatch<PoolObject & KubernetesObject>;
type Ads = CustomWatch<ConfigObject & KubernetesObject>;
type L2Statuses = CustomWatch<KubernetesObject & { status?: unknown }>;

export class KubeCache {
  readonly services: ListWatch<V1Service>;
  readonly endpointSlices: ListWatch<V1EndpointSlice>;
  readonly nodes: ListWatch<V1Node>;
  private readonly poolWatch: Pools;
  private readonly adWatch: Ads;
  private readonly l2StatusWatch: L2Statuses;
  private readonly metallbPools: Pools | undefined;
  private readonly metallbAds: Ads | undefined;
  private readonly bgp: BgpWatches | undefined;
  private readonly log: Logger;
  private readonly handlers: (() => void)[] = [];
  private stopped = false;

  constructor(api: KubeApi, log: Logger, options: KubeCacheOptions = {}) {
    this.log = log;
    const ns = options.namespace;
    this.services = new ListWatch<V1Service>(
      api,
      ns ? `/api/v1/namespaces/${ns}/services` : "/api/v1/services",
      { trim: trimService },
    );
    this.endpointSlices = new ListWatch<V1EndpointSlice>(
      api,
      ns
        ? `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`
        : "/apis/discovery.k8s.io/v1/endpointslices",
      { trim: trimEndpointSlice },
    );
    this.nodes = new ListWatch<V1Node>(api, "/api/v1/nodes", {
      labelSelector: options.nodeSelector,
      trim: trimNode,
    });
    const portico = { group: "portico.io", version: "v1alpha1", missingRetryMs: MAX_RESTART_DELAY_MS };
    this.poolWatch = new CustomWatch(api, {
      ...portico,
      plural: "ipaddresspools",
      whenMissing: "the IPAddressPool CRD is not installed; announcing without pool node selectors",
      quietWhenMissing: false,
    });
    this.adWatch = new CustomWatch(api, {
      ...portico,
      plural: "l2advertisements",
      whenMissing:
        "the portico.io L2Advertisement CRD is not installed; Portico's pools are announced by their own nodeSelectors",
      quietWhenMissing: true,
    });
    this.l2StatusWatch = new CustomWatch(
      api,
      {
        group: L2STATUS_GROUP,
        version: L2STATUS_VERSION,
        plural: L2STATUS_PLURAL,
        ...(ns ? { namespace: ns } : {}),
        missingRetryMs: MAX_RESTART_DELAY_MS,
        whenMissing:
          "the ServiceL2Status CRD is not installed; announcing without recording where (apply manifests/base/crds)",
        quietWhenMissing: false,
      },
      trimL2Status,
    );
    const metallbNs = options.metallbNamespace;
    const metallbRead =
      metallbNs === undefined
        ? undefined
        : {
            namespace: metallbNs,
            missingRetryMs: options.metallbRequired ? MAX_RESTART_DELAY_MS : OPTIONAL_RETRY_MS,
            quietWhenMissing: !options.metallbRequired,
          };
    if (options.bgp) this.bgp = new BgpWatches(api, MAX_RESTART_DELAY_MS, metallbRead, ns);
    if (metallbRead !== undefined) {
      const metallb = { group: "metallb.io", version: "v1beta1", ...metallbRead };
      this.metallbPools = new CustomWatch(api, {
        ...metallb,
        plural: "ipaddresspools",
        whenMissing:
          "MetalLB's IPAddressPool CRD (metallb.io/v1beta1) is not installed; reading Portico's pools only",
      });
      this.metallbAds = new CustomWatch(api, {
        ...metallb,
        plural: "l2advertisements",
        whenMissing:
          "MetalLB's L2Advertisement CRD (metallb.io/v1beta1) is not installed; MetalLB's pools are not announced",
      });
    }
    this.wire("service", this.services);
    this.wire("endpointslice", this.endpointSlices);
    this.wire("node", this.nodes);
    for (const custom of this.customWatches()) this.wireCustom(custom);
  }

  /** Portico's IPAddressPools; none while their CRD is not installed. */
  pools(): readonly PoolObject[] {
    return this.poolWatch.list();
  }

  /** Portico's L2Advertisements. */
  advertisements(): readonly ConfigObject[] {
    return this.adWatch.list();
  }

  /** The announcement records, reduced to the fields the speaker compares; none while the CRD is missing. */
  l2Statuses(): L2StatusRecord[] {
    return this.l2StatusWatch.list().flatMap((obj) => readL2Status(obj) ?? []);
  }

  /** Whether records can be written at all (their CRD is installed). */
  l2StatusesInstalled(): boolean {
    return this.l2StatusWatch.listed() && !this.l2StatusWatch.missing();
  }

  /** MetalLB's IPAddressPools in its namespace; none when not read or not installed. */
  metallbPoolObjects(): readonly PoolObject[] {
    return this.metallbPools?.list() ?? [];
  }

  /** MetalLB's L2Advertisements in its namespace. */
  metallbAdvertisements(): readonly ConfigObject[] {
    return this.metallbAds?.list() ?? [];
  }

  /** The BGP mode's objects; none when the speaker does not run in BGP mode. */
  bgpObjects(): BgpObjects | undefined {
    return this.bgp?.objects();
  }

  /** Whether ServiceBGPStatus records can be written. */
  bgpRecordsInstalled(): boolean {
    return this.bgp?.recordsInstalled() ?? false;
  }

  /** Called after any change to any watched object. */
  onChange(handler: () => void): void {
    this.handlers.push(handler);
  }

  /** Lists everything and starts watching; resolves once each list has completed. */
  async start(): Promise<void> {
    // The records are written, not read for the decision: announcing never waits for them (nor for their
    // RBAC), they are written once they have been listed.
    const custom = this.customWatches().filter(
      (c) => c !== this.l2StatusWatch && !(this.bgp?.isRecordWatch(c) ?? false),
    );
    await Promise.all(this.all().map((lw) => lw.start()));
    const listed = () =>
      [this.services, this.endpointSlices, this.nodes].every((lw) => lw.latestResourceVersion() !== "") &&
      custom.every((c) => c.listed());
    while (!this.stopped && !listed()) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.all().map((lw) => lw.stop()));
  }

  private customWatches(): CustomWatch<KubernetesObject>[] {
    return [
      this.poolWatch,
      this.adWatch,
      this.l2StatusWatch,
      this.metallbPools,
      this.metallbAds,
      ...(this.bgp?.all() ?? []),
    ].filter((c) => c !== undefined);
  }

  private all(): { start(): Promise<void>; stop(): Promise<void> }[] {
    return [this.services, this.endpointSlices, this.nodes, ...this.customWatches().map((c) => c.lw)];
  }

  private wire<T extends KubernetesObject>(kind: string, lw: ListWatch<T>): void {
    this.restartOnError(lw, false, (err, delay) => {
      this.log.warn(
        { kind, err: (err as Error)?.message ?? String(err), retryInMs: delay },
        "watch failed; restarting",
      );
      return undefined;
    });
  }

  /**
   * Without a CRD there are none of its objects: no pools means no node selectors, and the speaker announces as
   * it would without pools rather than not at all.
   */
  private wireCustom(custom: CustomWatch<KubernetesObject>): void {
    // The BGP records are the speakers' output, planned on their own timer: a change to one (thousands while
    // Services are first advertised, one per Service and node) must not make every speaker decide everything again.
    const output = this.bgp?.isRecordWatch(custom) ?? false;
    this.restartOnError(custom.lw, output, (err, delay) => {
      const code = err instanceof KubeApiError ? err.code : undefined;
      const outcome = custom.failed(code);
      if (outcome.newlyMissing) this.handlers.forEach((handler) => handler());
      const retryInMs = Math.min(delay, outcome.maxDelayMs ?? delay);
      const fields = {
        kind: custom.name,
        err: outcome.log ?? (err as Error)?.message ?? String(err),
        retryInMs,
      };
      // An optional CRD that is absent is the ordinary case: said once, at info.
      if (code === 404 && custom.kind.quietWhenMissing) {
        if (!outcome.quiet) this.log.info(fields, "custom resource not installed; looking again later");
      } else {
        this.log.warn(fields, "watch failed; restarting");
      }
      return outcome.maxDelayMs;
    });
  }

  /** `failed` logs and returns the most to back off to (default 30 s). */
  private restartOnError<T extends KubernetesObject>(
    lw: ListWatch<T>,
    quiet: boolean,
    failed: (err: unknown, delay: number) => number | undefined,
  ): void {
    if (!quiet) {
      for (const verb of ["add", "update", "delete"] as const) {
        lw.on(verb, () => this.handlers.forEach((handler) => handler()));
      }
    }
    let delay = 500;
    // "connect" comes before each list too: only one after a successful list says the restart worked, so a
    // list that keeps failing (no CRD) backs off instead of retrying twice a second forever.
    lw.on("connect", () => {
      if (lw.latestResourceVersion()) delay = 500;
    });
    lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      const max = failed(err, delay) ?? MAX_RESTART_DELAY_MS;
      const wait = Math.min(delay, max);
      setTimeout(() => {
        if (!this.stopped) lw.start().catch(() => undefined);
      }, wait).unref();
      delay = Math.min(delay * 2, max);
    });
  }
}
