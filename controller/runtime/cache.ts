// The shared cache every reconcile reads from: list-watches of Services, Nodes and EndpointSlices, the pods given
// readiness gates, and what the provider declares it needs (providers/descriptor.ts ClusterNeeds): pools and the
// namespaces whose labels select them, MetalLB's pools (their CRD looked for again while absent) and the speakers'
// L2 and BGP records, namespaces alone. A watch that fails is restarted with backoff; the list-watch relists when its resourceVersion is too old,
// and reports objects that vanished meanwhile as deletions, so no delete is missed across apiserver restarts.
// What is listed and watched, and how, is cacheSources.ts's.
import { cacheSources } from "./cacheSources.ts";
import { trimEndpointSlice, trimNamespace, trimNode, trimPod, trimService } from "./trim.ts";
import { gatedPod, waitsForGate, type GatedPod } from "../readinessGates/gates.ts";
import type { ListWatch } from "@kubernetes/client-node";
import {
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type V1EndpointSlice,
  type V1Namespace,
  type V1Node,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import {
  L2STATUS_GROUP,
  L2STATUS_PLURAL,
  L2STATUS_VERSION,
  readL2Status,
  trimL2Status,
} from "../../shared/l2status.ts";
import {
  BGPSTATUS_GROUP,
  BGPSTATUS_PLURAL,
  BGPSTATUS_VERSION,
  bgpAnnouncement,
  readBgpStatus,
} from "../../shared/bgpStatus.ts";
import type { Announcement } from "../../shared/bgpStatus.ts";
import type { ClusterView, IPAddressPoolObject } from "../../providers/cluster.ts";
import { RecordWatch } from "./recordWatch.ts";
import { SliceIndex, StableList } from "./cacheIndexes.ts";
import type { Logger } from "../../shared/log.ts";

export type Kind = "service" | "node" | "endpointslice" | "ipaddresspool" | "namespace" | "pod";

/** A speaker's ServiceL2Status record changed: the Service it is about (its namespace and name). */
export type ChangeHandler = (
  kind: Kind | "servicel2status",
  verb: "add" | "update" | "delete",
  obj: KubernetesObject,
) => void;

const MAX_RESTART_DELAY_MS = 30_000;

const TRIMMERS: Partial<Record<Kind, (obj: never) => void>> = {
  service: trimService,
  node: trimNode,
  endpointslice: trimEndpointSlice,
  namespace: trimNamespace,
  pod: trimPod,
};

export interface CacheOptions {
  /** Watch Services and EndpointSlices of this namespace only (default: all namespaces). */
  namespace?: string;
  /** Watch only Nodes with these labels (server-side filtering keeps the cache small). */
  nodeLabelSelector?: string;
  /** Also watch IPAddressPools and Namespaces (their labels select pools): bare metal only. */
  pools?: boolean;
  /** Watch Namespaces (their labels select Services) even without pools: Azure's namespace selectors. */
  namespaces?: boolean;
  /** With pools: also MetalLB's IPAddressPools (metallb.io/v1beta1) in this namespace, when installed. */
  metallbNamespace?: string;
  /** MetalLB's pools were asked for explicitly (--metallb=on): a missing CRD is warned about at every retry. */
  metallbRequired?: boolean;
  /** Watch the pods given readiness gates (labelled so by the webhook): their gates are opened by the controller. */
  gatedPods?: boolean;
}

/** MetalLB's CRD is usually absent: look for it again every five minutes, and say so once. */
const METALLB_RETRY_MS = 300_000;

export class ClusterCache implements ClusterView {
  readonly services: ListWatch<V1Service>;
  readonly nodes: ListWatch<V1Node>;
  readonly endpointSlices: ListWatch<V1EndpointSlice>;
  readonly pools: ListWatch<IPAddressPoolObject> | undefined;
  readonly metallbPools: ListWatch<IPAddressPoolObject> | undefined;
  /** The speakers' records (bare metal): who announces which Service's addresses, over ARP/NDP or BGP. */
  readonly l2Statuses: RecordWatch | undefined;
  readonly bgpStatuses: RecordWatch | undefined;
  /** The resourceVersion MetalLB's pools had when their list answered 404: none are installed until it moves. */
  private metallbMissingAt: string | undefined;
  private readonly metallbRequired: boolean;
  /** Whether the absence of MetalLB's CRD was logged already (it is said once). */
  private metallbTold = false;
  readonly namespaces: ListWatch<V1Namespace> | undefined;
  readonly pods: ListWatch<V1Pod> | undefined;
  /** The pods' list was refused (403: an install whose RBAC predates readiness gates): no gate is opened. */
  private podsForbidden = false;
  private readonly log: Logger;
  private readonly handlers: ChangeHandler[] = [];
  private stopped = false;
  private readonly nodeList: StableList<V1Node>;
  private readonly slices = new SliceIndex();

  constructor(kc: KubeConfig, log: Logger, opts: CacheOptions = {}) {
    this.log = log;
    this.metallbRequired = opts.metallbRequired ?? false;
    const watch = new Watch(kc);
    const ns = opts.namespace;
    // Namespaces' labels select pools as well as Services.
    const sources = cacheSources(kc, watch, { ...opts, namespaces: opts.pools || opts.namespaces });
    this.services = sources.services;
    this.nodes = sources.nodes;
    this.endpointSlices = sources.endpointSlices;
    this.pods = sources.pods;
    this.namespaces = sources.namespaces;
    this.pools = sources.pools;
    this.metallbPools = sources.metallbPools;
    // The indexes first: every other handler (and every reconcile it queues) then reads them current.
    this.nodeList = new StableList(() => this.nodes.list());
    for (const verb of ["add", "update", "delete"] as const)
      this.nodes.on(verb, () => this.nodeList.changed());
    for (const verb of ["add", "update"] as const) this.endpointSlices.on(verb, (s) => this.slices.put(s));
    this.endpointSlices.on("delete", (s) => this.slices.remove(s));
    this.wire("service", this.services);
    this.wire("node", this.nodes);
    this.wire("endpointslice", this.endpointSlices);
    if (this.pods) this.wire("pod", this.pods);
    if (this.namespaces) this.wire("namespace", this.namespaces);
    if (this.pools) this.wire("ipaddresspool", this.pools);
    if (this.metallbPools) this.wire("ipaddresspool", this.metallbPools);
    if (opts.pools) {
      const changed = (service: KubernetesObject, verb: "add" | "update" | "delete") =>
        this.handlers.forEach((h) => h("servicel2status", verb, service));
      this.l2Statuses = new RecordWatch(
        kc,
        watch,
        ns,
        {
          group: L2STATUS_GROUP,
          version: L2STATUS_VERSION,
          plural: L2STATUS_PLURAL,
          trim: trimL2Status,
          serviceOf: (obj) => {
            const r = readL2Status(obj);
            return r && { namespace: r.namespace, name: r.status.serviceName };
          },
        },
        log,
        changed,
      );
      this.bgpStatuses = new RecordWatch(
        kc,
        watch,
        ns,
        {
          group: BGPSTATUS_GROUP,
          version: BGPSTATUS_VERSION,
          plural: BGPSTATUS_PLURAL,
          serviceOf: (obj) => {
            const r = readBgpStatus(obj);
            return r && { namespace: r.namespace, name: r.status.serviceName };
          },
        },
        log,
        changed,
      );
    }
  }

  /** MetalLB's IPAddressPools in its namespace: none when not read, or while its CRD is not installed. */
  metallbPoolList(): readonly IPAddressPoolObject[] {
    return this.metallbMissing() ? [] : (this.metallbPools?.list() ?? []);
  }

  private metallbMissing(): boolean {
    return (
      this.metallbMissingAt !== undefined &&
      this.metallbMissingAt === this.metallbPools?.latestResourceVersion()
    );
  }

  /** A gated pod's gates and their state; undefined for a pod without Portico's gates (or not watched). */
  gatedPod(namespace: string, name: string): GatedPod | undefined {
    const pod = this.pods?.get(name, namespace);
    return pod && gatedPod(pod);
  }

  /** The pods of a namespace whose containers are ready and that wait for this Service's gate alone. */
  podsAwaitingGate(namespace: string, service: string): string[] {
    return (this.pods?.list(namespace) ?? [])
      .filter((pod) => waitsForGate(gatedPod(pod), service))
      .map((pod) => pod.metadata!.name!);
  }

  namespaceLabels(namespace: string): Record<string, string> {
    return this.namespaces?.get(namespace)?.metadata?.labels ?? {};
  }

  /**
   * The speakers' records of the Service's announcement, reduced to their fields; undefined when they cannot be
   * read (not bare metal, their CRD not installed, or no right to list them): nothing is then known of traffic.
   */
  announcements(namespace: string, name: string): Announcement[] | undefined {
    const l2 = this.l2Statuses?.list(namespace);
    const bgp = this.bgpStatuses?.list(namespace);
    if (!l2 && !bgp) return undefined;
    return [
      ...(l2 ?? []).flatMap((obj) => readL2Status(obj) ?? []).map((r) => r.status),
      ...(bgp ?? []).flatMap((obj) => readBgpStatus(obj) ?? []).map((r) => bgpAnnouncement(r.status)),
    ].filter((r) => r.serviceName === name);
  }

  private all(): ListWatch<KubernetesObject>[] {
    return [
      this.services,
      this.nodes,
      this.endpointSlices,
      this.pools,
      this.namespaces,
      this.pods,
      this.metallbPools,
      this.l2Statuses?.lw,
      this.bgpStatuses?.lw,
    ].filter((lw) => lw !== undefined);
  }

  onChange(handler: ChangeHandler): void {
    this.handlers.push(handler);
  }

  /** Lists everything and starts watching; resolves once the cache holds the full initial state. */
  async start(): Promise<void> {
    this.stopped = false;
    const all = this.all();
    await Promise.all(all.map((lw) => lw.start()));
    // A failed first list still resolves start(); the cache is complete only once each has listed.
    const listed = (lw: ListWatch<KubernetesObject>) =>
      lw.latestResourceVersion() !== "" ||
      (lw === this.metallbPools && this.metallbMissing()) ||
      (lw === this.pods && this.podsForbidden) ||
      (lw === this.l2Statuses?.lw && this.l2Statuses.missing()) ||
      (lw === this.bgpStatuses?.lw && this.bgpStatuses.missing());
    while (!this.stopped && !all.every(listed)) await new Promise((r) => setTimeout(r, 100));
    if (this.metallbPools && !this.metallbMissing()) {
      this.log.info(
        { kind: "ipaddresspools.metallb.io", pools: this.metallbPoolList().length },
        "MetalLB's IPAddressPool CRD is installed: allocating from MetalLB's pools too",
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.l2Statuses?.stop(), this.bgpStatuses?.stop()]);
    await Promise.all(this.all().map((lw) => lw.stop()));
  }

  service(key: string): V1Service | undefined {
    const [namespace, name] = key.split("/");
    return this.services.get(name!, namespace);
  }

  slicesFor(namespace: string, service: string): V1EndpointSlice[] {
    return this.slices.slicesFor(namespace, service);
  }

  /** Every Node: the same array until one changes (what is derived from it is kept as long: intent.ts). */
  allNodes(): readonly V1Node[] {
    return this.nodeList.list();
  }

  private wire<T extends KubernetesObject>(kind: Kind, lw: ListWatch<T>): void {
    // Before the change handlers: the cache keeps the object its handlers get (trim.ts).
    const trim = TRIMMERS[kind] as ((obj: T) => void) | undefined;
    if (trim) for (const verb of ["add", "update"] as const) lw.on(verb, trim);
    for (const verb of ["add", "update", "delete"] as const) {
      lw.on(verb, (obj) => this.handlers.forEach((h) => h(kind, verb, obj)));
    }
    let delay = 500;
    // A connect after a successful list means the last restart worked; one before any list (a list that
    // keeps failing) must not reset the backoff.
    lw.on("connect", () => {
      if (lw.latestResourceVersion()) delay = 500;
    });
    const metallb = (lw as ListWatch<KubernetesObject>) === this.metallbPools;
    lw.on("error", (err: unknown) => {
      if (this.stopped) return;
      const code = (err as { code?: unknown })?.code ?? (err as { statusCode?: unknown })?.statusCode;
      const max = metallb ? this.metallbFailed(lw, code, err, delay) : this.failed(kind, code, err, delay);
      setTimeout(
        () => {
          if (!this.stopped) lw.start().catch(() => undefined);
        },
        Math.min(delay, max),
      ).unref();
      delay = Math.min(delay * 2, max);
    });
  }

  private failed(kind: Kind, code: unknown, err: unknown, delay: number): number {
    const notFound = code === 404 || /HTTP-Code: 404/.test(String((err as Error)?.message));
    if (kind === "pod" && (code === 403 || /HTTP-Code: 403/.test(String((err as Error)?.message)))) {
      this.podsForbidden = true;
      this.log.warn(
        { kind, retryInMs: MAX_RESTART_DELAY_MS },
        "may not list pods: readiness gates stay closed until the controller's RBAC allows it (apply the manifests of this release)",
      );
      return MAX_RESTART_DELAY_MS;
    }
    this.log.warn(
      {
        kind,
        err:
          kind === "ipaddresspool" && notFound
            ? "the IPAddressPool CRD is not installed: kubectl apply -k manifests/overlays/metal"
            : ((err as Error)?.message ?? String(err)),
        retryInMs: delay,
      },
      "watch failed; restarting",
    );
    return MAX_RESTART_DELAY_MS;
  }

  /**
   * MetalLB's CRD not installed (404), or not readable (403): none of MetalLB's pools, rather than a controller
   * that never starts. Returns the longest wait before looking again.
   */
  private metallbFailed(lw: ListWatch<KubernetesObject>, code: unknown, err: unknown, delay: number): number {
    const kind = "ipaddresspools.metallb.io";
    const notFound = code === 404 || /HTTP-Code: 404/.test(String((err as Error)?.message));
    const forbidden = code === 403 || /HTTP-Code: 403/.test(String((err as Error)?.message));
    if (notFound || forbidden) this.metallbMissingAt = lw.latestResourceVersion();
    if (notFound && !this.metallbRequired) {
      if (!this.metallbTold) {
        this.log.info(
          { kind, retryInMs: Math.min(delay, METALLB_RETRY_MS) },
          "MetalLB's IPAddressPool CRD is not installed: allocating from Portico's pools only",
        );
      }
      this.metallbTold = true;
      return METALLB_RETRY_MS;
    }
    const why = notFound
      ? "MetalLB's IPAddressPool CRD (metallb.io/v1beta1) is not installed, but --metallb=on asks for it: install MetalLB's CRDs or kubectl apply -k manifests/metallb-compat"
      : forbidden
        ? "may not list MetalLB's IPAddressPools: apply the metal overlay's RBAC (manifests/overlays/metal/controller-metallb-rbac.yaml) or run with --metallb=off; allocating from Portico's pools only meanwhile"
        : ((err as Error)?.message ?? String(err));
    this.log.warn({ kind, err: why, retryInMs: delay }, "watch failed; restarting");
    return MAX_RESTART_DELAY_MS;
  }
}

export function serviceKey(obj: { metadata?: { namespace?: string; name?: string } }): string {
  return `${obj.metadata?.namespace}/${obj.metadata?.name}`;
}
